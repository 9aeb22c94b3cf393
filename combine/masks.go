package combine

import (
	"regexp"
	"strings"
	"sync"

	"scout/localtrace/otf2"
)

// RegionInfo describes the callee region of a call path as far as the derived
// metrics need it: they classify call paths by the region's name, paradigm
// and role, as Scalasca's remapping specification does.
type RegionInfo struct {
	Name     string // region name, e.g. "MPI_Recv"
	Paradigm uint8  // OTF2 paradigm (otf2.ParadigmMPI, ...)
	Role     uint8  // OTF2 region role (otf2.RoleBarrier, ...)
	File     string // source file; Cube's region "module", which marks GPU kernels
}

// class is a set of call-path categories: the type masks of Scalasca's
// remapping specification (share/scout.spec.in, <cubeplinit>) plus flags
// telling which paradigms occur.
type class uint64

const (
	cExecution class = 1 << iota
	cOverhead
	cMPI
	cMPIMgmtStartup
	cMPIMgmtComm
	cMPIMgmtFile
	cMPIMgmtWin
	cMPISyncCollective
	cMPISyncRMAActive
	cMPISyncRMAPassive
	cMPICommP2P
	cMPICommCollective
	cMPICommRMA
	cMPICommRMAPuts
	cMPICommRMAGets
	cMPICommRMAAtomics
	cMPIFileIndividual
	cMPIFileCollective
	cMPIFileIops
	cMPIFileIrops
	cMPIFileIwops
	cMPIFileCops
	cMPIFileCrops
	cMPIFileCwops
	cOMPSyncEBarrier
	cOMPSyncIBarrier
	cOMPSyncCritical
	cOMPSyncLockAPI
	cOMPSyncOrdered
	cOMPSyncTaskwait
	cOMPFlush
	cPthreadMgmt
	cPthreadSyncMutex
	cPthreadSyncCondition
	cOpenACC
	cOpenACCSetup
	cOpenACCComm
	cOpenACCSync
	cOpenACCKernelLaunches
	cOpenCL
	cOpenCLSetup
	cOpenCLComm
	cOpenCLSync
	cOpenCLKernelLaunches
	cOpenCLKernelExecutions
	cCUDA
	cCUDASetup
	cCUDAComm
	cCUDASync
	cCUDAKernelLaunches
	cCUDAKernelExecutions

	// Paradigm flags: a call path of the paradigm exists. A metric whose
	// paradigm is absent does not exist (Scalasca sets it VOID).
	hasMPI
	hasOpenMP
	hasPthread
	hasOpenACC
	hasOpenCL
	hasOpenCLKernels
	hasCUDA
	hasCUDAKernels
	// hasGrid2D is no paradigm of a call path: the trace defines a 2-D
	// process grid (Profile.Grid2D), where the wavefront refill metrics
	// of its corners exist; hasGrid3D likewise a 3-D one (Grid3D), where
	// those of its octant corners exist.
	hasGrid2D
	hasGrid3D
)

// The name patterns of the remapping specification, compiled at the
// first classify (compileMasks): only the report needs them, and held
// by every process from its start they took half a megabyte of heap.
var (
	reMPIStartup            *regexp.Regexp
	reMPIComm               *regexp.Regexp
	reMPIFileMgmt           *regexp.Regexp
	reMPIFileMgmtIndividual *regexp.Regexp
	reMPIWin                *regexp.Regexp
	reMPIRMAActive          *regexp.Regexp
	reMPIRMAPassive         *regexp.Regexp
	reMPITestWait           *regexp.Regexp
	reMPIPut                *regexp.Regexp
	reMPIGet                *regexp.Regexp
	reMPIFileIndiv          *regexp.Regexp
	reMPIFileColl           *regexp.Regexp
	reOMPLockAPI            *regexp.Regexp
	rePthreadMgmt           *regexp.Regexp
	rePthreadMutex          *regexp.Regexp
	rePthreadCond           *regexp.Regexp
	reACCSetup              *regexp.Regexp
	reACCComm               *regexp.Regexp
	reACCSync               *regexp.Regexp
	reACCLaunch             *regexp.Regexp
	reOpenCLSetup           *regexp.Regexp
	reOpenCLComm            *regexp.Regexp
	reOpenCLSync            *regexp.Regexp
	reOpenCLLaunch          *regexp.Regexp
	reCUDASetup             *regexp.Regexp
	reCUDAComm              *regexp.Regexp
	reCUDASync              *regexp.Regexp
	reCUDALaunch            *regexp.Regexp
	reCuSetup               *regexp.Regexp
	reCuComm                *regexp.Regexp
	reCuSync                *regexp.Regexp
	reCuLaunch              *regexp.Regexp
)

var compileMasks = sync.OnceFunc(func() {
	reMPIStartup = regexp.MustCompile(`^MPI_(Init(_thread|ialized){0,1}|Finalize(d){0,1})$`)
	reMPIComm = regexp.MustCompile(`^MPI_(Cart_(coords|create|get|map|rank|shift|sub)|Cartdim_get|` +
		`Comm_(accept|compare|connect|create(_group|_keyval){0,1}|delete_attr|disconnect|dup(_with_info){0,1}|` +
		`free(_keyval){0,1}|get_(attr|info|name|parent)|group|idup|join|rank|remote_(group|size)|` +
		`set_(attr|info|name)|size|spawn(_multiple){0,1}|split(_type){0,1}|test_inter)|Dims_create|` +
		`Dist_graph_(create(_adjacent){0,1}|neighbors(_count){0,1})|Graph_(create|get|map|neighbors(_count){0,1})|` +
		`Graphdims_get|Intercomm_(create|merge)|Topo_test|(Close|Open)_port|(Lookup|Publish|Unpublish)_name)$`)
	reMPIFileMgmt = regexp.MustCompile(`^MPI_File_(close|delete|get_(amode|atomicity|byte_offset|group|info|` +
		`position(_shared){0,1}|size|type_extent|view)|open|preallocate|seek(_shared){0,1}|` +
		`set_(atomicity|info|size|view)|sync)$`)
	reMPIFileMgmtIndividual = regexp.MustCompile(`(delete|get|seek)`)
	reMPIWin = regexp.MustCompile(`^MPI_Win_(allocate(_shared){0,1}|attach|create(_dynamic|_keyval){0,1}|` +
		`delete_attr|detach|free(_keyval){0,1}|get_(attr|group|info|name)|set_(attr|info|name)|shared_query)$`)
	reMPIRMAActive = regexp.MustCompile(`^MPI_Win_(complete|fence|post|start|test|wait)$`)
	reMPIRMAPassive = regexp.MustCompile(`^MPI_Win_((flush(_local){0,1}|lock|unlock)(_all){0,1}|sync)$`)
	reMPITestWait = regexp.MustCompile(`^MPI_(Test|Wait)(all|any|some){0,1}$`)
	reMPIPut = regexp.MustCompile(`^MPI_(Put|Rput)$`)
	reMPIGet = regexp.MustCompile(`^MPI_(Get|Rget)$`)
	reMPIFileIndiv = regexp.MustCompile(`^MPI_File_i{0,1}(read|write)(_at|_shared){0,1}$`)
	reMPIFileColl = regexp.MustCompile(`^MPI_File_((iread|iwrite)_(all|at_all)|(read|write)_(all|at_all|ordered)(_begin|_end){0,1})$`)
	reOMPLockAPI = regexp.MustCompile(`^omp_(destroy|init|set|test|unset)(_nest){0,1}_lock$`)
	rePthreadMgmt = regexp.MustCompile(`^pthread_(cancel|create|detach|exit|join)$`)
	rePthreadMutex = regexp.MustCompile(`^pthread_mutex_(destroy|init|lock|trylock|unlock)$`)
	rePthreadCond = regexp.MustCompile(`^pthread_cond_(broadcast|destroy|init|signal|timedwait|wait)$`)
	reACCSetup = regexp.MustCompile(`^acc_(init|shutdown)(@.*)?$`)
	reACCComm = regexp.MustCompile(`^acc_(upload|download)(@.*)?$`)
	reACCSync = regexp.MustCompile(`^acc_wait(@.*)?$`)
	reACCLaunch = regexp.MustCompile(`^acc_launch_kernel(@.*)?$`)
	reOpenCLSetup = apiPattern("cl", "", openclSetupAPI)
	reOpenCLComm = apiPattern("cl", "", openclCommAPI)
	reOpenCLSync = apiPattern("cl", "", openclSyncAPI)
	reOpenCLLaunch = apiPattern("cl", "", openclLaunchAPI)
	reCUDASetup = apiPattern("cuda", "", cudaRTSetupAPI)
	reCUDAComm = apiPattern("cuda", "", cudaRTCommAPI)
	reCUDASync = apiPattern("cuda", "", cudaRTSyncAPI)
	reCUDALaunch = apiPattern("cuda", "", cudaRTLaunchAPI)
	reCuSetup = apiPattern("cu", cuVersion, cuDrvSetupAPI)
	reCuComm = apiPattern("cu", cuVersion, cuDrvCommAPI)
	reCuSync = apiPattern("cu", cuVersion, cuDrvSyncAPI)
	reCuLaunch = apiPattern("cu", cuVersion, cuDrvLaunchAPI)
})

// cuVersion is the optional version suffix of CUDA driver API names.
const cuVersion = `(_v[0-9]+)?`

// apiPattern matches prefix + one of names + suffix, the whole name.
func apiPattern(prefix, suffix string, names []string) *regexp.Regexp {
	return regexp.MustCompile(`^` + prefix + `(` + strings.Join(names, "|") + `)` + suffix + `$`)
}

// classify returns the categories of a call path whose callee is r,
// following the <cubeplinit> block of Scalasca 2.6's scout.spec.
func classify(r RegionInfo) class {
	compileMasks()
	c := cExecution
	n := r.Name
	switch r.Paradigm {
	case otf2.ParadigmMPI:
		c |= hasMPI
		if n != "PARALLEL" {
			c |= cMPI
		}
		if reMPIStartup.MatchString(n) {
			c |= cMPIMgmtStartup
		}
		if reMPIComm.MatchString(n) {
			c |= cMPIMgmtComm
		}
		if reMPIFileMgmt.MatchString(n) {
			c |= cMPIMgmtFile
			if reMPIFileMgmtIndividual.MatchString(n) {
				c |= cMPIFileIops
			} else {
				c |= cMPIFileCops
			}
		}
		if reMPIWin.MatchString(n) {
			c |= cMPIMgmtWin
		}
		if r.Role == otf2.RoleBarrier {
			c |= cMPISyncCollective
		}
		if reMPIRMAActive.MatchString(n) {
			c |= cMPISyncRMAActive
		}
		if reMPIRMAPassive.MatchString(n) {
			c |= cMPISyncRMAPassive
		}
		if r.Role == otf2.RolePoint2Point || reMPITestWait.MatchString(n) {
			c |= cMPICommP2P
		}
		switch r.Role {
		case otf2.RoleCollOne2All, otf2.RoleCollAll2One, otf2.RoleCollAll2All, otf2.RoleCollOther:
			c |= cMPICommCollective
		case otf2.RoleRMA, otf2.RoleAtomic:
			c |= cMPICommRMA
			if reMPIPut.MatchString(n) {
				c |= cMPICommRMAPuts
			}
			if reMPIGet.MatchString(n) {
				c |= cMPICommRMAGets
			}
			if r.Role == otf2.RoleAtomic {
				c |= cMPICommRMAAtomics
			}
		}
		if reMPIFileIndiv.MatchString(n) {
			c |= cMPIFileIndividual | cMPIFileIops
			if strings.Contains(n, "read") {
				c |= cMPIFileIrops
			} else {
				c |= cMPIFileIwops
			}
		}
		if reMPIFileColl.MatchString(n) {
			c |= cMPIFileCollective | cMPIFileCops
			if strings.Contains(n, "read") {
				c |= cMPIFileCrops
			} else {
				c |= cMPIFileCwops
			}
		}
	case otf2.ParadigmOpenMP:
		c |= hasOpenMP
		switch r.Role {
		case otf2.RoleBarrier:
			c |= cOMPSyncEBarrier
		case otf2.RoleImplicitBarrier:
			c |= cOMPSyncIBarrier
		case otf2.RoleAtomic, otf2.RoleCritical:
			c |= cOMPSyncCritical
		case otf2.RoleOrdered:
			c |= cOMPSyncOrdered
		case otf2.RoleTaskWait:
			c |= cOMPSyncTaskwait
		case otf2.RoleFlush:
			c |= cOMPFlush
		}
		if reOMPLockAPI.MatchString(n) {
			c |= cOMPSyncLockAPI
		}
	case otf2.ParadigmPthread:
		c |= hasPthread
		if rePthreadMgmt.MatchString(n) {
			c |= cPthreadMgmt
		}
		if rePthreadMutex.MatchString(n) {
			c |= cPthreadSyncMutex
		}
		if rePthreadCond.MatchString(n) {
			c |= cPthreadSyncCondition
		}
	case otf2.ParadigmOpenACC:
		c |= hasOpenACC | cOpenACC
		if reACCSetup.MatchString(n) {
			c |= cOpenACCSetup
		}
		if reACCComm.MatchString(n) {
			c |= cOpenACCComm
		}
		if reACCSync.MatchString(n) {
			c |= cOpenACCSync
		}
		if reACCLaunch.MatchString(n) {
			c |= cOpenACCKernelLaunches
		}
	case otf2.ParadigmOpenCL:
		c |= hasOpenCL
		if n == "BUFFER FLUSH" {
			c = c&^cExecution | cOverhead
		} else {
			c |= cOpenCL
		}
		if reOpenCLSetup.MatchString(n) {
			c |= cOpenCLSetup
		}
		if reOpenCLComm.MatchString(n) {
			c |= cOpenCLComm
		}
		if reOpenCLSync.MatchString(n) || n == "WAIT FOR COMMAND QUEUE" {
			c |= cOpenCLSync
		}
		if reOpenCLLaunch.MatchString(n) {
			c |= cOpenCLKernelLaunches
		}
		if r.File == "OPENCL_KERNEL" {
			c |= hasOpenCLKernels | cOpenCLKernelExecutions
		}
	case otf2.ParadigmCUDA:
		c |= hasCUDA
		if n == "BUFFER FLUSH" {
			c = c&^cExecution | cOverhead
		} else {
			c |= cCUDA
		}
		if reCUDASetup.MatchString(n) || reCuSetup.MatchString(n) {
			c |= cCUDASetup
		}
		if reCUDAComm.MatchString(n) || reCuComm.MatchString(n) {
			c |= cCUDAComm
		}
		if reCUDASync.MatchString(n) || reCuSync.MatchString(n) || n == "DEVICE SYNCHRONIZE" {
			c |= cCUDASync
		}
		if reCUDALaunch.MatchString(n) || reCuLaunch.MatchString(n) {
			c |= cCUDAKernelLaunches
		}
		if r.File == "CUDA_KERNEL" {
			c |= hasCUDAKernels | cCUDAKernelExecutions
		}
	case otf2.ParadigmMeasurementSystem:
		if n == "TRACE BUFFER FLUSH" || n == "TRACING" {
			c = c&^cExecution | cOverhead
		}
	}
	return c
}

// The GPU API names of the remapping specification's OpenCL and CUDA
// categories (runtime API "cuda…", driver API "cu…").
var (
	openclSetupAPI = []string{
		"GetPlatformIDs", "GetPlatformInfo", "GetDeviceIDs", "GetDeviceInfo", "CreateSubDevices",
		"RetainDevice", "ReleaseDevice", "CreateContext", "CreateContextFromType", "RetainContext",
		"ReleaseContext", "GetContextInfo", "CreateProgramWithSource", "CreateProgramWithBinary",
		"RetainProgram", "ReleaseProgram", "GetProgramInfo", "GetProgramBuildInfo",
		"CreateKernelsInProgram", "CreateProgramWithBuiltInKernels", "BuildProgram", "CompileProgram",
		"LinkProgram", "CreateKernel", "RetainKernel", "ReleaseKernel", "GetEventInfo", "RetainEvent",
		"ReleaseEvent", "GetEventProfilingInfo", "CreateUserEvent", "SetUserEventStatus",
		"SetEventCallback", "CreateCommandQueue", "CreateCommandQueueWithProperties",
		"RetainCommandQueue", "ReleaseCommandQueue", "GetCommandQueueInfo", "SetCommandQueueProperty",
		"GetKernelInfo", "GetKernelWorkGroupInfo", "GetKernelArgInfo", "Flush", "UnloadCompiler",
		"UnloadPlatformCompiler", "GetExtensionFunctionAddress",
		"GetExtensionFunctionAddressForPlatform", "SetMemObjectDestructorCallback", "GetMemObjectInfo",
		"GetPipeInfo", "GetSupportedImageFormats", "GetImageInfo", "GetSamplerInfo",
		"CreateProgramWithIL", "GetKernelSubGroupInfo", "GetHostTimer", "GetDeviceAndHostTimer",
		"CloneKernel", "SetDefaultDeviceCommandQueue", "SetProgramReleaseCallback",
		"SetProgramSpecializationConstant",
	}
	openclCommAPI = []string{
		"CreateBuffer", "CreateSubBuffer", "EnqueueReadBuffer", "EnqueueReadBufferRect",
		"EnqueueWriteBuffer", "EnqueueWriteBufferRect", "EnqueueFillBuffer", "EnqueueCopyBuffer",
		"EnqueueCopyBufferRect", "EnqueueMapBuffer", "EnqueueUnmapMemObject", "EnqueueMigrateMemObjects",
		"CreatePipe", "SVMAlloc", "SVMFree", "EnqueueSVMFree", "EnqueueSVMMemcpy", "EnqueueSVMMemFill",
		"EnqueueSVMMap", "EnqueueSVMUnmap", "CreateImage", "CreateImage2D", "CreateImage3D",
		"EnqueueReadImage", "EnqueueWriteImage", "EnqueueCopyImage", "EnqueueCopyImageToBuffer",
		"EnqueueCopyBufferToImage", "EnqueueMapImage", "EnqueueFillImage", "CreateSamplerWithProperties",
		"CreateSampler", "ReleaseSampler", "RetainSampler", "RetainMemObject", "ReleaseMemObject",
		"EnqueueSVMMigrateMem",
	}
	openclSyncAPI = []string{
		"Finish", "WaitForEvents", "EnqueueWaitForEvents", "EnqueueBarrier", "EnqueueMarker",
		"EnqueueMarkerWithWaitList", "EnqueueBarrierWithWaitList",
	}
	openclLaunchAPI = []string{
		"SetKernelArg", "SetKernelArgSVMPointer", "SetKernelExecInfo", "EnqueueNDRangeKernel",
		"EnqueueTask", "EnqueueNativeKernel",
	}
	cudaRTSetupAPI = []string{
		"ChooseDevice", "DeviceGetAttribute", "DeviceGetByPCIBusId", "DeviceGetCacheConfig",
		"DeviceGetLimit", "DeviceGetPCIBusId", "DeviceGetSharedMemConfig",
		"DeviceGetStreamPriorityRange", "DeviceReset", "DeviceSetCacheConfig", "DeviceSetLimit",
		"DeviceSetSharedMemConfig", "GetDevice", "GetDeviceCount", "GetDeviceFlags",
		"GetDeviceProperties", "SetDevice", "SetDeviceFlags", "SetValidDevices", "ThreadExit",
		"ThreadGetCacheConfig", "ThreadGetLimit", "ThreadSetCacheConfig", "ThreadSetLimit",
		"StreamCreate", "StreamCreateWithFlags", "StreamCreateWithPriority", "StreamDestroy",
		"EventCreate", "EventCreateWithFlags", "EventDestroy", "FuncSetCacheConfig",
		"CtxResetPersistingL2Cache", "DeviceGetNvSciSyncAttributes", "DeviceGetP2PAttribute",
		"DeviceGetTexture1DLinearMaxWidth", "EventElapsedTime", "EventQuery", "EventRecord",
		"EventRecordWithFlags", "FuncGetAttributes", "FuncSetAttribute", "FuncSetSharedMemConfig",
		"GetParameterBuffer", "IpcCloseMemHandle", "IpcGetEventHandle", "IpcGetMemHandle",
		"IpcOpenEventHandle", "IpcOpenMemHandle", "OccupancyAvailableDynamicSMemPerBlock",
		"OccupancyMaxActiveBlocksPerMultiprocessor",
		"OccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "SetDoubleForDevice", "SetDoubleForHost",
		"StreamAddCallback", "StreamAttachMemAsync", "StreamBeginCapture", "StreamCopyAttributes",
		"StreamEndCapture", "StreamGetAttribute", "StreamGetCaptureInfo", "StreamGetFlags",
		"StreamGetPriority", "StreamIsCapturing", "StreamQuery", "StreamSetAttribute",
		"ThreadExchangeStreamCaptureMode",
	}
	cudaRTCommAPI = []string{
		"Free", "FreeArray", "FreeHost", "FreeMipmappedArray", "HostAlloc", "Malloc", "Malloc3D",
		"Malloc3DArray", "MallocArray", "MallocHost", "MallocManaged", "MallocMipmappedArray",
		"MallocPitch", "Memcpy", "Memcpy2D", "Memcpy2DArrayToArray", "Memcpy2DAsync",
		"Memcpy2DFromArray", "Memcpy2DFromArrayAsync", "Memcpy2DToArray", "Memcpy2DToArrayAsync",
		"Memcpy3D", "Memcpy3DAsync", "MemcpyPeer", "MemcpyPeerAsync", "MemcpyArrayToArray",
		"MemcpyAsync", "MemcpyFromArray", "MemcpyFromArrayAsync", "MemcpyFromSymbol",
		"MemcpyFromSymbolAsync", "MemcpyToArray", "MemcpyToArrayAsync", "MemcpyToSymbol",
		"MemcpyToSymbolAsync", "ArrayGetInfo", "ArrayGetSparseProperties", "GetMipmappedArrayLevel",
		"GetSymbolAddress", "GetSymbolSize", "HostGetDevicePointer", "HostGetFlags", "HostRegister",
		"HostUnregister", "MemAdvise", "MemGetInfo", "MemPrefetchAsync", "MemRangeGetAttribute",
		"MemRangeGetAttributes", "Memcpy3DPeer", "Memcpy3DPeerAsync",
		"MipmappedArrayGetSparseProperties", "PointerGetAttributes",
	}
	cudaRTSyncAPI = []string{
		"StreamWaitEvent", "StreamSynchronize", "EventSynchronize", "DeviceSynchronize",
		"ThreadSynchronize",
	}
	cudaRTLaunchAPI = []string{
		"LaunchKernel", "Launch", "GetParameterBufferV2", "Memset", "Memset2D", "Memset2DAsync",
		"Memset3D", "Memset3DAsync", "MemsetAsync", "LaunchCooperativeKernel",
		"LaunchCooperativeKernelMultiDevice", "LaunchHostFunc",
	}
	cuDrvSetupAPI = []string{
		"Init", "DeviceGet", "DeviceGetAttribute", "DeviceGetCount", "DeviceGetName", "DeviceTotalMem",
		"DeviceComputeCapability", "DeviceGetProperties", "DevicePrimaryCtxGetState",
		"DevicePrimaryCtxRelease", "DevicePrimaryCtxReset", "DevicePrimaryCtxRetain",
		"DevicePrimaryCtxSetFlags", "CtxCreate", "CtxDestroy", "CtxGetApiVersion", "CtxGetCacheConfig",
		"CtxGetCurrent", "CtxGetDevice", "CtxGetFlags", "CtxGetLimit", "CtxGetSharedMemConfig",
		"CtxGetStreamPriorityRange", "CtxPopCurrent", "CtxPushCurrent", "CtxSetCacheConfig",
		"CtxSetCurrent", "CtxSetLimit", "CtxSetSharedMemConfig", "CtxAttach", "CtxDetach", "LinkCreate",
		"LinkDestroy", "EventCreate", "EventDestroy", "StreamCreate", "StreamCreateWithPriority",
		"StreamDestroy", "CtxResetPersistingL2Cache", "DeviceGetLuid", "DeviceGetNvSciSyncAttributes",
		"DeviceGetTexture1DLinearMaxWidth", "DeviceGetUuid", "DriverGetVersion", "EventElapsedTime",
		"EventQuery", "EventRecord", "EventRecordWithFlagsFuncGetAttribute", "FuncSetAttribute",
		"FuncSetBlockShape", "FuncSetCacheConfig", "FuncSetSharedMemConfig", "FuncSetSharedSize",
		"LinkAddData", "LinkAddFile", "LinkComplete", "ModuleGetFunction", "ModuleGetGlobal",
		"ModuleGetSurfRef", "ModuleGetTexRef", "ModuleLoad", "ModuleLoadData", "ModuleLoadDataEx",
		"ModuleLoadFatBinary", "ModuleUnload", "OccupancyAvailableDynamicSMemPerBlock",
		"OccupancyMaxActiveBlocksPerMultiprocessor",
		"OccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "OccupancyMaxPotentialBlockSize",
		"OccupancyMaxPotentialBlockSizeWithFlags", "ParamSetSize", "ParamSetTexRef", "ParamSetf",
		"ParamSeti", "ParamSetv", "StreamAddCallback", "StreamAttachMemAsync", "StreamBeginCapture",
		"StreamCopyAttributes", "StreamEndCapture", "StreamGetAttribute", "StreamGetCaptureInfo",
		"StreamGetCtx", "StreamGetFlags", "StreamGetPriority", "StreamIsCapturing", "StreamQuery",
		"StreamSetAttribute", "ThreadExchangeStreamCaptureMode",
	}
	cuDrvCommAPI = []string{
		"Array3DCreate", "ArrayCreate", "ArrayDestroy", "MemAlloc", "MemAllocHost", "MemAllocManaged",
		"MemAllocPitch", "Memcpy", "Memcpy2D", "Memcpy2DAsync", "Memcpy2DUnaligned", "Memcpy3D",
		"Memcpy3DAsync", "Memcpy3DPeer", "Memcpy3DPeerAsync", "MemcpyAsync", "MemcpyAtoA", "MemcpyAtoD",
		"MemcpyAtoH", "MemcpyAtoHAsync", "MemcpyDtoA", "MemcpyDtoD", "MemcpyDtoDAsync", "MemcpyDtoH",
		"MemcpyDtoHAsync", "MemcpyHtoA", "MemcpyHtoAAsync", "MemcpyHtoD", "MemcpyHtoDAsync",
		"MemcpyPeer", "MemcpyPeerAsync", "MipmappedArrayCreate", "MipmappedArrayDestroy", "MemFree",
		"MemFreeHost", "MemHostAlloc", "Array3DGetDescriptor", "ArrayGetDescriptor",
		"ArrayGetSparseProperties", "DeviceGetByPCIBusId", "DeviceGetPCIBusId", "IpcCloseMemHandle",
		"IpcGetEventHandle", "IpcGetMemHandle", "IpcOpenEventHandle", "IpcOpenMemHandle",
		"MemAddressFree", "MemAddressReserve", "MemAdvise", "MemCreate", "MemExportToShareableHandle",
		"MemGetAccess", "MemGetAddressRange", "MemGetAllocationGranularity",
		"MemGetAllocationPropertiesFromHandle", "MemGetInfo", "MemHostGetDevicePointer",
		"MemHostGetFlags", "MemHostRegister", "MemHostUnregister", "MemImportFromShareableHandle",
		"MemMap", "MemMapArrayAsync", "MemPrefetchAsync", "MemRangeGetAttribute",
		"MemRangeGetAttributes", "MemRelease", "MemRetainAllocationHandle", "MemSetAccess", "MemUnmap",
		"MipmappedArrayGetLevel", "MipmappedArrayGetSparseProperties", "PointerGetAttribute",
		"PointerGetAttributes", "PointerSetAttribute",
	}
	cuDrvSyncAPI = []string{
		"CtxSynchronize", "StreamWaitEvent", "StreamSynchronize", "EventSynchronize",
	}
	cuDrvLaunchAPI = []string{
		"LaunchKernel", "Launch", "LaunchGrid", "LaunchGridAsync", "MemsetD16", "MemsetD16Async",
		"MemsetD2D16", "MemsetD2D16Async", "MemsetD2D32", "MemsetD2D32Async", "MemsetD2D8",
		"MemsetD2D8Async", "MemsetD32", "MemsetD32Async", "MemsetD8", "MemsetD8Async",
		"LaunchCooperativeKernel", "LaunchCooperativeKernelMultiDevice", "LaunchHostFunc",
	}
)

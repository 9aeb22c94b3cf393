package otf2

// Event record identifiers (otf2_events_int.h) that the analysis uses.
const (
	EvBufferFlush         = 10
	EvMeasurementOnOff    = 11
	EvEnter               = 12
	EvLeave               = 13
	EvMpiSend             = 14
	EvMpiIsend            = 15
	EvMpiIsendComplete    = 16
	EvMpiIrecvRequest     = 17
	EvMpiRecv             = 18
	EvMpiIrecv            = 19
	EvMpiRequestTest      = 20
	EvMpiRequestCancelled = 21
	EvMpiCollectiveBegin  = 22
	EvMpiCollectiveEnd    = 23
	EvOmpFork             = 24
	EvOmpJoin             = 25
	EvOmpAcquireLock      = 26
	EvOmpReleaseLock      = 27
	EvOmpTaskCreate       = 28
	EvOmpTaskSwitch       = 29
	EvOmpTaskComplete     = 30
	EvMetric              = 31
	EvThreadFork          = 53
	EvThreadJoin          = 54
	EvThreadTeamBegin     = 55
	EvThreadTeamEnd       = 56
	EvThreadAcquireLock   = 57
	EvThreadReleaseLock   = 58
	EvThreadTaskCreate    = 59
	EvThreadTaskSwitch    = 60
	EvThreadTaskComplete  = 61
	EvProgramBegin        = 83
	EvProgramEnd          = 84
	EvNbcRequest          = 85
	EvNbcComplete         = 86
	EvCommCreate          = 87
	EvCommDestroy         = 88
)

// FieldKind is the wire encoding of one event field.
type FieldKind uint8

// Field encodings.
const (
	FU8        FieldKind = iota // 1 raw byte
	FU32                        // compressed uint32
	FU64                        // compressed uint64
	FI64                        // compressed int64
	FTime                       // 8 raw bytes, a clock-corrected timestamp
	FArray32                    // u32c count, then count compressed uint32 values
	FMetricVal                  // u8 count, then count × (u8 type, u64c value)
)

// noMap marks a field that holds no identifier.
const noMap = -1

// FieldSpec describes one field of an event record.
type FieldSpec struct {
	Name string
	Kind FieldKind
	Map  int8 // mapping type applied to the value (or array elements), or -1
}

// EventSpec describes the wire layout of one event record type.
type EventSpec struct {
	Name      string
	Singleton bool // one compressed field and no length byte
	Fields    []FieldSpec
}

// MaxArgs is the largest number of scalar fields of any event record.
const MaxArgs = 6

func f(name string, k FieldKind) FieldSpec               { return FieldSpec{name, k, noMap} }
func fm(name string, k FieldKind, mapping int) FieldSpec { return FieldSpec{name, k, int8(mapping)} }

// EventSpecs describes every event record of OTF2 3.0, indexed by record
// type. Unlisted types are skipped by their length.
var EventSpecs = [256]*EventSpec{
	10: {Name: "BufferFlush", Fields: []FieldSpec{f("stopTime", FTime)}},
	11: {Name: "MeasurementOnOff", Fields: []FieldSpec{f("measurementMode", FU8)}},
	12: {Name: "Enter", Singleton: true, Fields: []FieldSpec{fm("region", FU32, MapRegion)}},
	13: {Name: "Leave", Singleton: true, Fields: []FieldSpec{fm("region", FU32, MapRegion)}},
	14: {Name: "MpiSend", Fields: msgFields(false)},
	15: {Name: "MpiIsend", Fields: msgFields(true)},
	16: {Name: "MpiIsendComplete", Singleton: true, Fields: []FieldSpec{f("requestID", FU64)}},
	17: {Name: "MpiIrecvRequest", Singleton: true, Fields: []FieldSpec{f("requestID", FU64)}},
	18: {Name: "MpiRecv", Fields: msgFields(false)},
	19: {Name: "MpiIrecv", Fields: msgFields(true)},
	20: {Name: "MpiRequestTest", Singleton: true, Fields: []FieldSpec{f("requestID", FU64)}},
	21: {Name: "MpiRequestCancelled", Singleton: true, Fields: []FieldSpec{f("requestID", FU64)}},
	22: {Name: "MpiCollectiveBegin"},
	23: {Name: "MpiCollectiveEnd", Fields: []FieldSpec{f("collectiveOp", FU8), fm("communicator", FU32, MapComm),
		f("root", FU32), f("sizeSent", FU64), f("sizeReceived", FU64)}},
	24: {Name: "OmpFork", Singleton: true, Fields: []FieldSpec{f("numberOfRequestedThreads", FU32)}},
	25: {Name: "OmpJoin"},
	26: {Name: "OmpAcquireLock", Fields: []FieldSpec{f("lockID", FU32), f("acquisitionOrder", FU32)}},
	27: {Name: "OmpReleaseLock", Fields: []FieldSpec{f("lockID", FU32), f("acquisitionOrder", FU32)}},
	28: {Name: "OmpTaskCreate", Singleton: true, Fields: []FieldSpec{f("taskID", FU64)}},
	29: {Name: "OmpTaskSwitch", Singleton: true, Fields: []FieldSpec{f("taskID", FU64)}},
	30: {Name: "OmpTaskComplete", Singleton: true, Fields: []FieldSpec{f("taskID", FU64)}},
	31: {Name: "Metric", Fields: []FieldSpec{fm("metric", FU32, MapMetric), f("values", FMetricVal)}},
	32: {Name: "ParameterString", Fields: []FieldSpec{fm("parameter", FU32, MapParameter), fm("string", FU32, MapString)}},
	33: {Name: "ParameterInt", Fields: []FieldSpec{fm("parameter", FU32, MapParameter), f("value", FI64)}},
	34: {Name: "ParameterUnsignedInt", Fields: []FieldSpec{fm("parameter", FU32, MapParameter), f("value", FU64)}},
	35: {Name: "RmaWinCreate", Fields: []FieldSpec{win()}},
	36: {Name: "RmaWinDestroy", Fields: []FieldSpec{win()}},
	37: {Name: "RmaCollectiveBegin"},
	38: {Name: "RmaCollectiveEnd", Fields: []FieldSpec{f("collectiveOp", FU8), f("syncLevel", FU32), win(),
		f("root", FU32), f("bytesSent", FU64), f("bytesReceived", FU64)}},
	39: {Name: "RmaGroupSync", Fields: []FieldSpec{f("syncLevel", FU32), win(), fm("group", FU32, MapGroup)}},
	40: {Name: "RmaRequestLock", Fields: lockFields()},
	41: {Name: "RmaAcquireLock", Fields: lockFields()},
	42: {Name: "RmaTryLock", Fields: lockFields()},
	43: {Name: "RmaReleaseLock", Fields: []FieldSpec{win(), f("remote", FU32), f("lockId", FU64)}},
	44: {Name: "RmaSync", Fields: []FieldSpec{win(), f("remote", FU32), f("syncType", FU8)}},
	45: {Name: "RmaWaitChange", Fields: []FieldSpec{win()}},
	46: {Name: "RmaPut", Fields: []FieldSpec{win(), f("remote", FU32), f("bytes", FU64), f("matchingId", FU64)}},
	47: {Name: "RmaGet", Fields: []FieldSpec{win(), f("remote", FU32), f("bytes", FU64), f("matchingId", FU64)}},
	48: {Name: "RmaAtomic", Fields: []FieldSpec{win(), f("remote", FU32), f("type", FU8), f("bytesSent", FU64),
		f("bytesReceived", FU64), f("matchingId", FU64)}},
	49: {Name: "RmaOpCompleteBlocking", Fields: []FieldSpec{win(), f("matchingId", FU64)}},
	50: {Name: "RmaOpCompleteNonBlocking", Fields: []FieldSpec{win(), f("matchingId", FU64)}},
	51: {Name: "RmaOpTest", Fields: []FieldSpec{win(), f("matchingId", FU64)}},
	52: {Name: "RmaOpCompleteRemote", Fields: []FieldSpec{win(), f("matchingId", FU64)}},
	53: {Name: "ThreadFork", Fields: []FieldSpec{f("model", FU8), f("numberOfRequestedThreads", FU32)}},
	54: {Name: "ThreadJoin", Fields: []FieldSpec{f("model", FU8)}},
	55: {Name: "ThreadTeamBegin", Fields: []FieldSpec{fm("threadTeam", FU32, MapComm)}},
	56: {Name: "ThreadTeamEnd", Fields: []FieldSpec{fm("threadTeam", FU32, MapComm)}},
	57: {Name: "ThreadAcquireLock", Fields: []FieldSpec{f("model", FU8), f("lockID", FU32), f("acquisitionOrder", FU32)}},
	58: {Name: "ThreadReleaseLock", Fields: []FieldSpec{f("model", FU8), f("lockID", FU32), f("acquisitionOrder", FU32)}},
	59: {Name: "ThreadTaskCreate", Fields: taskFields()},
	60: {Name: "ThreadTaskSwitch", Fields: taskFields()},
	61: {Name: "ThreadTaskComplete", Fields: taskFields()},
	62: {Name: "ThreadCreate", Fields: threadFields()},
	63: {Name: "ThreadBegin", Fields: threadFields()},
	64: {Name: "ThreadWait", Fields: threadFields()},
	65: {Name: "ThreadEnd", Fields: threadFields()},
	66: {Name: "CallingContextEnter", Fields: []FieldSpec{fm("callingContext", FU32, MapCallingContext), f("unwindDistance", FU32)}},
	67: {Name: "CallingContextLeave", Fields: []FieldSpec{fm("callingContext", FU32, MapCallingContext)}},
	68: {Name: "CallingContextSample", Fields: []FieldSpec{fm("callingContext", FU32, MapCallingContext),
		f("unwindDistance", FU32), fm("interruptGenerator", FU32, MapInterruptGenerator)}},
	69: {Name: "IoCreateHandle", Fields: []FieldSpec{ioh(), f("mode", FU8), f("creationFlags", FU32), f("statusFlags", FU32)}},
	70: {Name: "IoDestroyHandle", Fields: []FieldSpec{ioh()}},
	71: {Name: "IoDuplicateHandle", Fields: []FieldSpec{ioh(), fm("newHandle", FU32, MapIoHandle), f("statusFlags", FU32)}},
	72: {Name: "IoSeek", Fields: []FieldSpec{ioh(), f("offsetRequest", FI64), f("whence", FU8), f("offsetResult", FU64)}},
	73: {Name: "IoChangeStatusFlags", Fields: []FieldSpec{ioh(), f("statusFlags", FU32)}},
	74: {Name: "IoDeleteFile", Fields: []FieldSpec{f("ioParadigm", FU8), fm("file", FU32, MapIoFile)}},
	75: {Name: "IoOperationBegin", Fields: []FieldSpec{ioh(), f("mode", FU8), f("operationFlags", FU32),
		f("bytesRequest", FU64), f("matchingId", FU64)}},
	76: {Name: "IoOperationTest", Fields: []FieldSpec{ioh(), f("matchingId", FU64)}},
	77: {Name: "IoOperationIssued", Fields: []FieldSpec{ioh(), f("matchingId", FU64)}},
	78: {Name: "IoOperationComplete", Fields: []FieldSpec{ioh(), f("bytesResult", FU64), f("matchingId", FU64)}},
	79: {Name: "IoOperationCancelled", Fields: []FieldSpec{ioh(), f("matchingId", FU64)}},
	80: {Name: "IoAcquireLock", Fields: []FieldSpec{ioh(), f("lockType", FU8)}},
	81: {Name: "IoReleaseLock", Fields: []FieldSpec{ioh(), f("lockType", FU8)}},
	82: {Name: "IoTryLock", Fields: []FieldSpec{ioh(), f("lockType", FU8)}},
	83: {Name: "ProgramBegin", Fields: []FieldSpec{fm("programName", FU32, MapString), fm("programArguments", FArray32, MapString)}},
	84: {Name: "ProgramEnd", Fields: []FieldSpec{f("exitStatus", FI64)}},
	85: {Name: "NonBlockingCollectiveRequest", Fields: []FieldSpec{f("requestID", FU64)}},
	86: {Name: "NonBlockingCollectiveComplete", Fields: []FieldSpec{f("collectiveOp", FU8), fm("communicator", FU32, MapComm),
		f("root", FU32), f("sizeSent", FU64), f("sizeReceived", FU64), f("requestID", FU64)}},
	87: {Name: "CommCreate", Fields: []FieldSpec{fm("communicator", FU32, MapComm)}},
	88: {Name: "CommDestroy", Fields: []FieldSpec{fm("communicator", FU32, MapComm)}},
}

func msgFields(request bool) []FieldSpec {
	fs := []FieldSpec{f("peer", FU32), fm("communicator", FU32, MapComm), f("msgTag", FU32), f("msgLength", FU64)}
	if request {
		fs = append(fs, f("requestID", FU64))
	}
	return fs
}

func win() FieldSpec { return fm("win", FU32, MapRmaWin) }
func ioh() FieldSpec { return fm("handle", FU32, MapIoHandle) }

func lockFields() []FieldSpec {
	return []FieldSpec{win(), f("remote", FU32), f("lockId", FU64), f("lockType", FU8)}
}

func taskFields() []FieldSpec {
	return []FieldSpec{fm("threadTeam", FU32, MapComm), f("creatingThread", FU32), f("generationNumber", FU32)}
}

func threadFields() []FieldSpec {
	return []FieldSpec{fm("threadContingent", FU32, MapComm), f("sequenceCount", FU64)}
}

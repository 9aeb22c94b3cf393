package analysis

import "syscall"

// lowerPriority gives the calling thread the lowest scheduling priority
// (nice 19); the caller is locked to its thread. A failure leaves it as
// it was.
func lowerPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}

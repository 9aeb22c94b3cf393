package cube

import (
	"fmt"
	"strings"
)

// Error describes malformed or truncated input found while reading a
// report. Read and ReadFile return it (possibly wrapped) for every
// problem with the data itself; I/O errors of the underlying reader are
// wrapped in it too.
type Error struct {
	// File is the name of the .cubex file; empty for [Read].
	File string
	// Member is the archive member ("anchor.xml", "3.data", ...); empty
	// when the problem is in the tar container itself.
	Member string
	// Offset is the byte offset of the problem within Member (or within
	// the archive when Member is empty); -1 when unknown.
	Offset int64
	// Err is the underlying problem.
	Err error
}

// Error formats e as "cube: FILE: MEMBER: offset N: problem".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("cube: ")
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Member != "" {
		b.WriteString(e.Member + ": ")
	} else if e.Offset >= 0 {
		b.WriteString("archive ")
	}
	if e.Offset >= 0 {
		fmt.Fprintf(&b, "offset %d: ", e.Offset)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying problem.
func (e *Error) Unwrap() error { return e.Err }

// errAt returns an *Error for member at offset off (-1: unknown).
func errAt(member string, off int64, format string, args ...any) *Error {
	return &Error{Member: member, Offset: off, Err: fmt.Errorf(format, args...)}
}

package run

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// UsageError is bad input: a wrong flag, config key or value, an impossible
// run (exit 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// SignalError is the cause of a run stopped by a signal (the context's
// cause, set by the command's signal handler).
type SignalError struct{ Sig os.Signal }

func (e SignalError) Error() string { return "stopped by " + SignalName(e.Sig) }

// SignalName is SIGTERM or SIGINT.
func SignalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// AgreedError ends a rank whose run failed elsewhere: the lowest failing
// rank prints the cause, the others exit quietly with the same code.
type AgreedError struct{ Code int }

func (e AgreedError) Error() string { return "another rank failed" }

// ExitCode maps an error to the process exit status: 0 success, 1 run
// failure, 2 usage or config error, 130/143 stopped by SIGINT/SIGTERM.
func ExitCode(err error) int {
	var se SignalError
	var ue UsageError
	var ae AgreedError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ae):
		return ae.Code
	case errors.As(err, &se):
		if se.Sig == syscall.SIGTERM {
			return 143
		}
		return 130
	case errors.As(err, &ue):
		return 2
	default:
		return 1
	}
}

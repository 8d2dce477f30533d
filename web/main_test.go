package web

import (
	"testing"
	"time"
)

// eventually polls cond until it holds and fails the test if it does not within timeout: for a state
// another goroutine reaches (a connection's goroutines ending, a file closed) that signals nothing a
// test could wait on. It is a deadline, not a measurement: the test asserts the state, never the time.
func eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; !cond(); wait = min(2*wait, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("not so after %v: %s", timeout, what)
		}
		time.Sleep(wait) // the poll's back-off: cond is the state waited for
	}
}

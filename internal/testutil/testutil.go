// Package testutil holds what the tests of several packages share. It is imported by tests only.
package testutil

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NeedTool returns the path of a program a test needs (mkfs.f2fs, dump.f2fs, zstd, chromium, …).
// Without it the test fails when CI=true — CI installs everything (scripts/test), so a missing tool
// there is a broken run, not a reason to skip — and is skipped otherwise, on a developer's machine.
func NeedTool(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(tb, name, err)
	}
	return p
}

// NeedTools is NeedTool for several programs, all needed.
func NeedTools(tb testing.TB, names ...string) {
	tb.Helper()
	for _, n := range names {
		NeedTool(tb, n)
	}
}

// NeedAnyTool returns the path of the first of names found (a program known by several names, such
// as chromium, chromium-browser and google-chrome), as NeedTool does for one.
func NeedAnyTool(tb testing.TB, names ...string) string {
	tb.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	missing(tb, names[0], exec.ErrNotFound)
	return ""
}

func missing(tb testing.TB, name string, err error) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		how := "scripts/test installs it"
		if strings.HasPrefix(name, "fixture") {
			how = "it is committed: a clone without it is broken"
		}
		tb.Fatalf("%s is required (CI=true; %s): %v", name, how, err)
	}
	tb.Skipf("%s not found (%v); skipping — set CI=true to make this a failure", name, err)
}

// Gunzip returns the whole of the gzip file name, expanded: a reference read by the standard
// library alone, for the tests of what expands it otherwise. The buffer is sized once from the
// gzip trailer's ISIZE (RFC 1952 2.3.1; the last member's size mod 2^32, so only a hint): growing
// it from zero to a fixture's 128 MiB cost 0.4 CPU-s a call.
func Gunzip(tb testing.TB, name string) []byte {
	tb.Helper()
	packed, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	var hint int
	if len(packed) >= 4 {
		hint = int(binary.LittleEndian.Uint32(packed[len(packed)-4:]))
	}
	out := bytes.NewBuffer(make([]byte, 0, hint+bytes.MinRead))
	if _, err := out.ReadFrom(zr); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return out.Bytes()
}

// Refusal is an operation of a kernel-seq case the model must refuse (core.ErrUnmodelled) rather
// than guess: its `refused` file, "N FUNCTION" (N from 1, FUNCTION the kernel function the
// refusal names).
type Refusal struct {
	Op       int
	Function string
}

// KernelSeqRefusal reads dir's `refused` file (ok false when there is none).
func KernelSeqRefusal(t testing.TB, dir string) (r Refusal, ok bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "refused"))
	if err != nil {
		return r, false
	}
	if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d %s", &r.Op, &r.Function); err != nil {
		t.Fatalf("%s/refused: %v", dir, err)
	}
	return r, true
}

// Refused says whether err is the refusal r: an ErrUnmodelled-like error (is) naming r.Function
// and, when the error names operations, operation r.Op.
func (r Refusal) Refused(err error, is func(error) bool) bool {
	return err != nil && is(err) && strings.Contains(err.Error(), r.Function) &&
		(!strings.Contains(err.Error(), "operation ") || strings.Contains(err.Error(), fmt.Sprintf("operation %d ", r.Op)))
}

// NeedFixture fails the test when the committed fixture file name is missing and CI=true (a clone
// that lost a fixture is a broken run, not a reason to skip), and skips it otherwise, as NeedTool
// does for programs. It returns name.
func NeedFixture(tb testing.TB, name string) string {
	tb.Helper()
	if _, err := os.Stat(name); err != nil {
		missing(tb, "fixture "+name, err)
	}
	return name
}

// NeedFixtures returns the committed fixture files matching the glob pattern, sorted. None found
// fails the test under CI=true and skips it elsewhere, as NeedFixture does for one.
func NeedFixtures(tb testing.TB, pattern string) []string {
	tb.Helper()
	names, err := filepath.Glob(pattern)
	if err == nil && len(names) == 0 {
		err = os.ErrNotExist
	}
	if err != nil {
		missing(tb, "fixtures "+pattern, err)
	}
	return names
}

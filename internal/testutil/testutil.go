// Package testutil holds what the tests of several packages share. It is imported by tests only.
package testutil

import (
	"compress/gzip"
	"io"
	"os"
	"os/exec"
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
		tb.Fatalf("%s is required (CI=true; scripts/test installs it): %v", name, err)
	}
	tb.Skipf("%s not found (%v); skipping — set CI=true to make this a failure", name, err)
}

// Gunzip returns the whole of the gzip file name, expanded: a reference read by the standard
// library alone, for the tests of what expands it otherwise.
func Gunzip(tb testing.TB, name string) []byte {
	tb.Helper()
	f, err := os.Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return b
}

package main

import (
	"flag"
	"io"
	"testing"
)

// TestSizeFlag: the flags take the syntax every zrviz input takes (units.ParseSize has the cases).
func TestSizeFlag(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var off, limit sizeFlag
	limit.nonNegative = true
	fs.Var(&off, "offset", "")
	fs.Var(&limit, "limit", "")
	if err := fs.Parse([]string{"--offset", "-1", "--limit", "1.5GiB"}); err != nil {
		t.Fatal(err)
	}
	if !off.set || off.n != -1 || limit.n != 3<<29 {
		t.Errorf("offset %d (set %v), limit %d", off.n, off.set, limit.n)
	}
	for _, bad := range []string{"0x", "1.1", "lots"} {
		if err := fs.Parse([]string{"--offset", bad}); err == nil {
			t.Errorf("--offset %q accepted", bad)
		}
	}
	if err := fs.Parse([]string{"--limit", "-4k"}); err == nil {
		t.Error("--limit -4k accepted")
	}
}

package core

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestWriteCallsCSV: a header, then one row per call of each mode in order, counted from 1.
func TestWriteCallsCSV(t *testing.T) {
	st := newState([]uint32{A, A + 1, B}, 3)
	var results []*Result
	for _, m := range []Mode{PerBlock, Batched} {
		r, err := Simulate(st.input(), Request{Length: 3 * 4096}, m)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	var b bytes.Buffer
	if err := WriteCallsCSV(&b, results...); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"mode,index,start,len",
		"per-block,1," + u32(A) + ",1",
		"per-block,2," + u32(A+1) + ",1",
		"per-block,3," + u32(B) + ",1",
		"batched,1," + u32(A) + ",2",
		"batched,2," + u32(B) + ",1",
	}, "\n") + "\n"
	if b.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b.String(), want)
	}
}

func u32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

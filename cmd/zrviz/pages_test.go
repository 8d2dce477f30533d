package main

import (
	"encoding/json"
	"testing"
)

// TestRunHugeRanges: the CLI gives the kernel's answers to ranges no volume can hold: 1 TiB from a
// 4 MiB file on the 256 MiB demo is ENOSPC once f2fs_reserve_new_blocks runs out of free blocks
// (after the file's 1,024 blocks are invalidated), and an offset past s_maxbytes is refused by
// vfs_fallocate with EFBIG before f2fs is reached (no call at all).
func TestRunHugeRanges(t *testing.T) {
	for _, c := range []struct {
		args   []string
		errno  string
		blocks uint64
	}{
		{[]string{"--length", "1TiB"}, "ENOSPC", 1024},
		{[]string{"--offset", "999999999999999", "--length", "4096"}, "EFBIG", 0},
	} {
		var got struct {
			Results []struct {
				Mode  string `json:"mode"`
				Errno string `json:"errno"`
				Stats struct {
					BlocksInvalidated uint64 `json:"blocksInvalidated"`
				} `json:"stats"`
			} `json:"results"`
		}
		args := append(append([]string{"run", "--json"}, c.args...), "/cases/contiguous.bin")
		if err := json.Unmarshal([]byte(mustRunMain(t, args...)), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Results) == 0 {
			t.Fatalf("%v: no result", c.args)
		}
		for _, r := range got.Results {
			if r.Errno != c.errno || r.Stats.BlocksInvalidated != c.blocks {
				t.Errorf("%v %s: %q after %d blocks, want %s after %d", c.args, r.Mode, r.Errno, r.Stats.BlocksInvalidated, c.errno, c.blocks)
			}
		}
	}
}

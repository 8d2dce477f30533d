package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/imgio"
)

func TestBlockCommand(t *testing.T) {
	// imgio/demo/README.md: /cases/contiguous.bin (inode 28) holds 1024 blocks from 22528; its inode is at 4625.
	tests := []struct {
		args      []string
		kind      string
		ino       uint32
		path      string
		index     int64 // -1: a node
		textWants []string
	}{
		{[]string{"22528"}, imgio.KindData, 28, "/cases/contiguous.bin", 0, []string{"kind      data", "/cases/contiguous.bin  inode 28, file block 0"}},
		{[]string{"0x5801"}, imgio.KindData, 28, "/cases/contiguous.bin", 1, []string{"file block 1"}},
		{[]string{"--image", "../../imgio/testdata/basic.img.gz", "0"}, imgio.KindSuperblock, 0, "", -1, []string{"magic", "0xf2f52010"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var b imgio.BlockInfo
			if err := json.Unmarshal([]byte(mustRunMain(t, append([]string{"block", "--json"}, tc.args...)...)), &b); err != nil {
				t.Fatal(err)
			}
			if b.Kind != tc.kind || len(b.Problems) != 0 {
				t.Fatalf("kind %s problems %+v, want %s", b.Kind, b.Problems, tc.kind)
			}
			if tc.index >= 0 && (b.Owner == nil || b.Owner.Ino != tc.ino || b.Owner.Path != tc.path || *b.Owner.Index != uint64(tc.index)) {
				t.Errorf("owner %+v, want inode %d %s index %d", b.Owner, tc.ino, tc.path, tc.index)
			}
			text := mustRunMain(t, append([]string{"block"}, tc.args...)...)
			for _, w := range tc.textWants {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
		})
	}
	// The JSON has exactly the keys, null where they do not apply.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(mustRunMain(t, "block", "--json", "1536")), &raw); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	if len(keys) != 10 || string(raw["segno"]) != "null" || string(raw["valid"]) != "null" || string(raw["owner"]) != "null" || string(raw["kind"]) != `"sit"` {
		t.Errorf("SIT block JSON: %v", raw)
	}
	if out := mustRunMain(t, "block", "--hex", "4625"); !strings.Contains(out, "contiguous.bin") || !strings.Contains(out, "00000000  a4 81") {
		t.Errorf("--hex: no dump of the inode block:\n%s", out)
	}
	for _, bad := range []string{"x12", "0x", "-1", "4294967296", "1e3"} {
		if _, err := runMain(t, "block", bad); !errors.As(err, new(usageError)) {
			t.Errorf("block %s: %v, want a usage error", bad, err)
		}
	}
	if _, err := runMain(t, "block"); !errors.As(err, new(usageError)) {
		t.Errorf("block without ADDR: %v, want a usage error", err)
	}
}

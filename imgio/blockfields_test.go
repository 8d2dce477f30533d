package imgio

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

// blockFieldsGolden holds, for each fixture image, the SHA-256 of the block inspector's output
// (every [BlockInfo] of every block, as JSON) so a change to how fields are decoded — the tables
// derived from the raw structs included — shows up as a changed hash. -update rewrites only the
// images the run covered (all four outside -short).
const blockFieldsGolden = "testdata/blockfields.golden"

func TestBlockFieldsUnchanged(t *testing.T) {
	names := []string{"basic", "features", "segs4", "demo"}
	if testing.Short() {
		// The fast tier: the image with the most kinds of structure (extra attributes, inline
		// data and dentries, compression, quotas); the others outside -short.
		names = []string{"features"}
	}
	want := map[string]string{}
	if b, err := os.ReadFile(blockFieldsGolden); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if k, v, ok := strings.Cut(l, " "); ok {
				want[k] = v
			}
		}
	} else if !*update {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, name := range names {
		var img *Image
		var err error
		if name == "demo" {
			img, err = OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
		} else {
			img, err = OpenFileContext(context.Background(), testutil.RawImage(t, "testdata/"+name+".img.gz"), nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		n := img.Volume().BlockCount
		for addr := uint32(0); uint64(addr) < n; addr++ {
			b, err := img.Block(context.Background(), addr)
			if err != nil {
				t.Fatalf("%s: block %d: %v", name, addr, err)
			}
			b.Data = nil
			j, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(j)
			h.Write([]byte{'\n'})
		}
		img.Close()
		got[name] = fmt.Sprintf("%x blocks=%d", h.Sum(nil), n)
		if !*update && got[name] != want[name] {
			t.Errorf("%s: the block inspector's output changed: %s, want %s (if intended, run go test -run TestBlockFieldsUnchanged -update)", name, got[name], want[name])
		}
	}
	if *update {
		for k, v := range want {
			if _, ok := got[k]; !ok {
				got[k] = v
			}
		}
		var b strings.Builder
		for _, k := range []string{"basic", "features", "segs4", "demo"} {
			if v, ok := got[k]; ok {
				fmt.Fprintf(&b, "%s %s\n", k, v)
			}
		}
		if err := os.WriteFile(blockFieldsGolden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

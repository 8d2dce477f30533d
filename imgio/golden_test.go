package imgio

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// dumpImage renders what the reader sees in a stable text form: the volume, every path with its
// inode facts and slot map, and every segment holding valid blocks.
func dumpImage(t *testing.T, img *Image) []byte {
	t.Helper()
	var b bytes.Buffer
	v := img.Volume()
	v.UUID, v.Version, v.InitVersion = "", "", "" // the demo's kernel build string is noise
	vj, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "volume %s\n", vj)
	ents, err := img.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		f, err := img.File(e.Ino)
		if err != nil {
			t.Fatal(err)
		}
		in := f.Inode()
		fmt.Fprintf(&b, "%s ino=%d type=%s size=%d blocks=%d links=%d inline=%#x addrs=%d/%d xattr=%d checksum=%q nids=%v\n",
			e.Path, e.Ino, e.Type, e.Size, in.Blocks, in.Links, in.Inline, in.AddrsPerInode, in.AddrsPerBlock, in.InlineXattrSize, in.Checksum, in.Nids)
		if in.Inline&inlineData != 0 {
			data, err := f.ReadInline()
			if err != nil {
				t.Fatal(err)
			}
			if len(data) > 32 {
				data = data[:32]
			}
			fmt.Fprintf(&b, "  inline %q\n", data)
		}
		ext, err := f.Extents()
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, x := range ext {
			if x.State == StateAddr {
				parts = append(parts, fmt.Sprintf("%d+%d@%d", x.Index, x.Count, x.Addr))
			} else {
				parts = append(parts, fmt.Sprintf("%d+%d:%s", x.Index, x.Count, x.State))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, "  extents %s\n", strings.Join(parts, " "))
		}
		dn, err := f.Dnodes()
		if err != nil {
			t.Fatal(err)
		}
		if len(dn) > 1 {
			var ps []string
			for _, d := range dn {
				ps = append(ps, fmt.Sprintf("%s(nid %d @%d ofs %d)", d.Path, d.Nid, d.Blkaddr, d.Offset))
			}
			fmt.Fprintf(&b, "  dnodes %s\n", strings.Join(ps, " "))
		}
	}
	segs, err := img.Segments()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if s.ValidBlocks > 0 || s.Current {
			fmt.Fprintf(&b, "segment %d valid=%d type=%d current=%v source=%s map=%x\n", s.Segno, s.ValidBlocks, s.Type, s.Current, s.Source, bytes.TrimRight(s.Map[:], "\x00"))
		}
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	paths := testutil.NeedFixtures(t, "testdata/*.img.gz")
	paths = append(paths, "demo")
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".img.gz")
		t.Run(name, func(t *testing.T) {
			var img *Image
			var err error
			if p == "demo" {
				img = openDemo(t)
			} else if img, err = OpenFileContext(context.Background(), p, &Options{TempDir: t.TempDir()}); err != nil {
				t.Fatal(err)
			}
			defer img.Close()
			if img.Format() != FormatGzip && p != "demo" {
				t.Errorf("format %q, want gzip", img.Format())
			}
			got := dumpImage(t, img)
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("dump differs from %s (run go test -run TestGolden -update and review the diff)", golden)
			}
		})
	}
}

package imgio

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// openDemo opens the embedded demo image once per test.
func openDemo(t testing.TB) *Image {
	t.Helper()
	img, err := OpenDemo(&Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("OpenDemo: %v", err)
	}
	t.Cleanup(func() { img.Close() })
	return img
}

type demoFile struct {
	ino     uint32
	typ     FileType
	size    int64
	iblocks uint64
	path    string
}

func readDemoFiles(t *testing.T) []demoFile {
	t.Helper()
	f, err := os.Open("demo/demo.files.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []demoFile
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) != 5 {
			t.Fatalf("bad line %q", sc.Text())
		}
		ino, _ := strconv.ParseUint(fl[0], 10, 32)
		size, _ := strconv.ParseInt(fl[2], 10, 64)
		ib, _ := strconv.ParseUint(fl[3], 10, 64)
		out = append(out, demoFile{uint32(ino), FileType(fl[1]), size, ib, fl[4]})
	}
	return out
}

func TestDemoFiles(t *testing.T) {
	img := openDemo(t)
	ents, err := img.Files()
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Entry{}
	for _, e := range ents {
		byPath[e.Path] = e
	}
	want := readDemoFiles(t)
	if len(ents) != len(want)+1 {
		t.Errorf("Files: %d entries, want %d (+ root)", len(ents), len(want))
	}
	if ents[0].Path != "/" || ents[0].Ino != 3 {
		t.Errorf("first entry %+v, want root", ents[0])
	}
	for _, w := range want {
		e, ok := byPath[w.path]
		if !ok {
			t.Errorf("%s: missing", w.path)
			continue
		}
		if e.Ino != w.ino || e.Type != w.typ || (w.typ != TypeDir && e.Size != w.size) {
			t.Errorf("%s: got %+v, want %+v", w.path, e, w)
		}
		f, err := img.Lookup(w.path)
		if err != nil {
			t.Errorf("Lookup(%s): %v", w.path, err)
			continue
		}
		if in := f.Inode(); in.Ino != w.ino || in.Blocks != w.iblocks {
			t.Errorf("%s: ino %d i_blocks %d, want %d %d", w.path, in.Ino, in.Blocks, w.ino, w.iblocks)
		}
	}
}

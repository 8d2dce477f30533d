package imgio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

// TestEmbeddedDemo holds the demo zrviz embeds (demo/demo.simg.zst) to demo/demo.img.zst, the image
// the README, the kernel fixtures and the oracle scripts name, in every block; and the demo held in
// memory (OpenDemoMemory, the static site's) to the one expanded into a temporary file, keeping only
// its non-zero blocks. One expansion of each serves both checks.
func TestEmbeddedDemo(t *testing.T) {
	onDisk, err := OpenDemo(&Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer onDisk.Close()
	want, err := os.ReadFile(testutil.DemoImage(t))
	if err != nil {
		t.Fatal(err)
	}
	if onDisk.Size() != int64(len(want)) || onDisk.Format() != FormatAndroidSparse || onDisk.Name() != "demo.img" {
		t.Fatalf("embedded demo: %q, %s, %d bytes; want demo.img, android-sparse, %d bytes",
			onDisk.Name(), onDisk.Format(), onDisk.Size(), len(want))
	}
	mem, err := OpenDemoMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	if mem.Size() != onDisk.Size() || mem.Format() != onDisk.Format() {
		t.Fatalf("memory: %d bytes %s, file: %d bytes %s", mem.Size(), mem.Format(), onDisk.Size(), onDisk.Format())
	}
	zero := make([]byte, 4096)
	var nonZero int64
	for addr := range uint32(len(want) / 4096) {
		b, errB := onDisk.ReadBlock(addr)
		if errB != nil {
			t.Fatalf("block %d: %v", addr, errB)
		}
		if !bytes.Equal(b, want[int64(addr)*4096:][:4096]) {
			t.Fatalf("block %d of the embedded demo differs from demo/demo.img.zst's: run imgio/demo/mksparse", addr)
		}
		a, errA := mem.ReadBlock(addr)
		if errA != nil || !bytes.Equal(a, b) {
			t.Fatalf("block %d differs (memory err %v)", addr, errA)
		}
		if !bytes.Equal(b, zero) {
			nonZero++
		}
	}
	// Only the non-zero blocks are held.
	if m := mem.r.(*memImage); m.used != nonZero*4096 {
		t.Errorf("the demo held in memory takes %d bytes; its %d non-zero blocks are %d", m.used, nonZero, nonZero*4096)
	}
}

// TestLoadMemoryBound refuses an image whose non-zero blocks pass the bound, saying where.
func TestLoadMemoryBound(t *testing.T) {
	r, done, err := demoStream()
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	_, err = LoadMemory(context.Background(), r, "demo.img", &Options{MaxMemory: 1 << 20})
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want a *MemoryError", err)
	}
	if me.Limit != 1<<20 || me.Off <= 0 || me.Off >= 256<<20 {
		t.Fatalf("MemoryError %+v", me)
	}
}

// TestMemImageReadAt reads across block edges, holes and the end.
func TestMemImageReadAt(t *testing.T) {
	m := &memImage{limit: 1 << 20, blocks: map[int64][]byte{}, size: 3*4096 + 100}
	want := make([]byte, m.size)
	for i := 4096; i < 4096+5000; i++ {
		want[i] = byte(i)
	}
	if _, err := m.WriteAt(want[4096:4096+5000], 4096); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ off, n int64 }{{0, 10}, {4000, 200}, {4096, 5000}, {9000, 500}, {12200, 88}} {
		got := make([]byte, c.n)
		if _, err := m.ReadAt(got, c.off); err != nil {
			t.Fatalf("ReadAt(%d, %d): %v", c.off, c.n, err)
		}
		if !bytes.Equal(got, want[c.off:c.off+c.n]) {
			t.Fatalf("ReadAt(%d, %d) differs", c.off, c.n)
		}
	}
	if n, err := m.ReadAt(make([]byte, 200), m.size-100); n != 100 || err == nil {
		t.Fatalf("read past the end: %d, %v", n, err)
	}
}

package source_test

import (
	"context"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/source"
)

// BenchmarkDemoBench64 runs kernel case 1 (the demo's 64 MiB file, 17
// chunks, 3 physical runs) reading the real image, with every event
// handed to a callback.
func BenchmarkDemoBench64(b *testing.B) {
	img := openDemo(b)
	in, err := source.Input(img, "/seed/bench64.bin")
	if err != nil {
		b.Fatal(err)
	}
	req := core.Request{Length: 64 << 20}
	for _, mode := range core.Modes {
		b.Run("walk/"+mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				r, err := core.Walk(in, req, mode, func(*core.Event) bool { n++; return true })
				if err != nil || r.Stats.DnodeChunks != 17 {
					b.Fatal(err)
				}
			}
		})
		b.Run("simulate/"+mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := core.Simulate(in, req, mode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// maxBytesSeq is the s_maxbytes sequence on the demo's /cases/contiguous.bin: one page zeroed at
// the last page below s_maxbytes (it grows i_size to 4,329,687,105,536 and allocates the
// double-indirect, an indirect and a direct node), the same page again with KEEP_SIZE, a range
// with partial pages around it, and a zero from the file's start to s_maxbytes, which reserves
// node by node until ENOSPC.
var maxBytesSeq = []core.Request{
	{Offset: 4329687101440, Length: 4096},
	{Offset: 4329687101440, Length: 4096, KeepSize: true},
	{Offset: 4329687100000, Length: 5536},
	{Offset: 0, Length: 4329687105536},
}

// BenchmarkMaxBytesSequence runs maxBytesSeq in each mode, each operation on the state the
// previous one left. Its cost must follow the nodes and slots that exist or are touched, never
// i_size or the range's length.
func BenchmarkMaxBytesSequence(b *testing.B) {
	img := openDemo(b)
	in0, err := source.Input(img, "/cases/contiguous.bin")
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range core.Modes {
		b.Run(mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				in := in0
				for i, req := range maxBytesSeq {
					r, err := core.Simulate(in, req, mode)
					if err != nil {
						b.Fatal(err)
					}
					if i == 0 && r.SizeAfter != 4329687105536 {
						b.Fatalf("i_size %d", r.SizeAfter)
					}
					in = r.NextInput()
				}
			}
		})
	}
}

// maxBytesFixture is the operations of the kernel fixture kernel-seq/f-maxbytes (the page below
// s_maxbytes of the 9 GiB sparse file, EFBIG just past it, the data at 9 GiB, the same page of
// /cases/contiguous.bin with KEEP_SIZE, sync, the page again); sync is an empty op string.
var maxBytesFixture = []struct {
	path string
	req  core.Request
}{
	{"/cases/sparse-9g.bin", core.Request{Offset: 4329687101440, Length: 4096}},
	{"/cases/sparse-9g.bin", core.Request{Offset: 4329687105536, Length: 4096}},
	{"/cases/sparse-9g.bin", core.Request{Offset: 4329687101440, Length: 8192}},
	{"/cases/sparse-9g.bin", core.Request{Offset: 9663676416, Length: 1052672}},
	{"/cases/contiguous.bin", core.Request{Offset: 4329687101440, Length: 4096, KeepSize: true}},
	{"", core.Request{}},
	{"/cases/sparse-9g.bin", core.Request{Offset: 4329687101440, Length: 4096}},
}

// BenchmarkMaxBytesFixture runs maxBytesFixture on one core.Seq per mode, as zrviz run --ops does.
func BenchmarkMaxBytesFixture(b *testing.B) {
	img := openDemo(b)
	files := map[string]core.Input{}
	for _, op := range maxBytesFixture {
		if op.path != "" && files[op.path].Path == "" {
			in, err := source.Input(img, op.path)
			if err != nil {
				b.Fatal(err)
			}
			files[op.path] = in
		}
	}
	for _, mode := range core.Modes {
		b.Run(mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := core.NewSeq(mode)
				runMaxBytesFixture(b, q, files)
			}
		})
		// As zrviz run --ops does now: with the segment manager mounted (source.NewSeq reads every
		// SIT entry) and fed every call.
		b.Run(mode.String()+"/gc", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q, err := source.NewSeq(context.Background(), img, mode)
				if err != nil {
					b.Fatal(err)
				}
				runMaxBytesFixture(b, q, files)
			}
		})
	}
}

// runMaxBytesFixture runs maxBytesFixture's operations on q.
func runMaxBytesFixture(b *testing.B, q *core.Seq, files map[string]core.Input) {
	for _, op := range maxBytesFixture {
		if op.path == "" {
			if _, err := q.Sync(); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if _, _, _, err := q.Zero(files[op.path], op.req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDemoBench64Seq zeroes the demo's 64 MiB file on a core.Seq (kernel case 1 as zrviz run
// --ops runs it): without a segment manager, and with one (source.NewSeq: every SIT entry read
// at mount, each of the per-block mode's 16,384 calls fed to it).
func BenchmarkDemoBench64Seq(b *testing.B) {
	img := openDemo(b)
	in, err := source.Input(img, "/seed/bench64.bin")
	if err != nil {
		b.Fatal(err)
	}
	req := core.Request{Length: 64 << 20}
	for _, mode := range core.Modes {
		for _, withGC := range []bool{false, true} {
			name := mode.String()
			if withGC {
				name += "/gc"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					q := core.NewSeq(mode)
					if withGC {
						if q, err = source.NewSeq(context.Background(), img, mode); err != nil {
							b.Fatal(err)
						}
					}
					if _, _, _, err := q.Zero(in, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDemoPunchTruncate64 punches the whole of the demo's 64 MiB file and truncates it to 0,
// reading the real image: f2fs_truncate_data_blocks_range over 16,384 slots in 17 dnodes, and for
// truncate the 16 nodes below the inode freed (t4-to-zero's second op: 16,401 calls per block,
// 36 batched).
func BenchmarkDemoPunchTruncate64(b *testing.B) {
	img := openDemo(b)
	in, err := source.Input(img, "/seed/bench64.bin")
	if err != nil {
		b.Fatal(err)
	}
	for _, req := range []core.Request{{Op: core.OpPunch, Length: 64 << 20}, {Op: core.OpTruncate}} {
		for _, mode := range core.Modes {
			b.Run(req.Op.String()+"/"+mode.String(), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					r, err := core.Simulate(in, req, mode)
					if err != nil || r.Stats.DnodeChunks != 17 {
						b.Fatal(err, r.Stats.DnodeChunks)
					}
				}
			})
		}
	}
}

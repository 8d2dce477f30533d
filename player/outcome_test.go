package player

import (
	"testing"

	"github.com/zrviz/zrviz/core"
)

// TestOutcome: what the page's outcome line and the end stop's title say, by value, for runs that
// succeed (two modes and one, with runs and without), run out of space part way, are refused by
// the VFS, by f2fs or by open(2), and meet a corrupt SIT.
func TestOutcome(t *testing.T) {
	both := []core.Mode{core.PerBlock, core.Batched}
	contiguous := []uint32{4608, 4609, 4610, 4611, 4612, 4613, 4614, 4615}
	whole := core.Request{Offset: 0, Length: 8 * 4096}
	spec := func(slots []uint32, modes []core.Mode, req core.Request, edit func(*Spec)) Spec {
		s := fakeSpec(slots, modes, req)
		if edit != nil {
			edit(&s)
		}
		return s
	}
	for _, tt := range []struct {
		name string
		spec Spec
		want Outcome
	}{
		{"one run, both modes", spec(contiguous, both, whole, nil), Outcome{
			Returns: "f2fs_zero_range returns 0",
			Line:    "f2fs_zero_range returns 0: 8 per-block calls against 1 batched, 8.0× fewer SIT lock holds, and the same slots and SIT at the end."}},
		{"one run, batched only", spec(contiguous, []core.Mode{core.Batched}, whole, nil), Outcome{
			Returns: "f2fs_zero_range returns 0",
			Line:    "f2fs_zero_range returns 0: 1 call, 8 blocks released."}},
		{"one block, per-block only", spec(contiguous, []core.Mode{core.PerBlock}, core.Request{Offset: 4096, Length: 4096}, nil), Outcome{
			Returns: "f2fs_zero_range returns 0",
			Line:    "f2fs_zero_range returns 0: 1 call, 1 block released."}},
		{"no runs: only holes", spec([]uint32{0, 0, 0, core.NewAddr}, both, core.Request{Offset: 0, Length: 4 * 4096}, nil), Outcome{
			Returns: "f2fs_zero_range returns 0",
			Line:    "f2fs_zero_range returns 0: no mapped block was reached, so f2fs_invalidate_blocks was not called."}},
		{"ENOSPC part way", spec(contiguous, both, core.Request{Offset: 0, Length: 4096 * 4096}, func(s *Spec) {
			// The inode's chunk reserves its 865 holes; the next chunk's 1,018 do not fit.
			s.Input.Volume.UserBlockCount = s.Input.Volume.ValidBlockCount + 900
		}), Outcome{Returns: "f2fs_zero_range returns -ENOSPC", Line: "f2fs_zero_range returns -ENOSPC."}},
		{"EFBIG", spec(contiguous, both, core.Request{Offset: 999999999999999, Length: 4096}, nil), Outcome{
			Returns: "vfs_fallocate returns -EFBIG", Line: "vfs_fallocate returns -EFBIG."}},
		{"a flag vfs_fallocate refuses", spec(contiguous, both, core.Request{Offset: 0, Length: 4096, ExtraFlags: 0x40}, nil), Outcome{
			Returns: "vfs_fallocate returns -EOPNOTSUPP", Line: "vfs_fallocate returns -EOPNOTSUPP."}},
		{"a directory", spec(contiguous, both, whole, func(s *Spec) { s.Input.Inode.Type = "dir" }), Outcome{
			Returns: "open returns -EISDIR", Line: "open returns -EISDIR."}},
		{"a compressed file", spec(contiguous, both, whole, func(s *Spec) {
			s.Input.Inode.Flags |= core.FlagCompressed
			s.Compression = "compressed (lz4, cluster 4 blocks)"
		}), Outcome{
			Returns: "f2fs_fallocate returns -EOPNOTSUPP",
			Line:    "f2fs_fallocate returns -EOPNOTSUPP: f2fs refuses FALLOC_FL_ZERO_RANGE on compressed and pinned files (f2fs_fallocate checks before anything changes), and this file is compressed (lz4, cluster 4 blocks): a cluster's first slot may hold COMPRESS_ADDR, the compressed-cluster marker, not an address.",
			Ahead:   "This file is compressed (lz4, cluster 4 blocks): f2fs refuses FALLOC_FL_ZERO_RANGE on compressed and pinned files, so the first step is EOPNOTSUPP."}},
		{"a pinned file", spec(contiguous, both, whole, func(s *Spec) { s.Input.Inode.Inline |= core.InlinePinFile }), Outcome{
			Returns: "f2fs_fallocate returns -EOPNOTSUPP",
			Line:    "f2fs_fallocate returns -EOPNOTSUPP: f2fs refuses FALLOC_FL_ZERO_RANGE on compressed and pinned files (f2fs_fallocate checks before anything changes), and this file is pinned."}},
		{"a block whose SIT bit is clear", spec(contiguous, both, whole, func(s *Spec) { s.Input.SIT.(*fakeSIT).clear(4610) }), Outcome{
			Returns: "f2fs_zero_range returns -EFSCORRUPTED",
			Line:    `f2fs_zero_range returns -EFSCORRUPTED: the kernel logs "Inconsistent error blkaddr:4610, sit bitmap:0".`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := build(t, tt.spec)
			if got := o.Outcome(); got != tt.want {
				t.Errorf("Outcome() =\n%+v\nwant\n%+v", got, tt.want)
			}
			if tt.name == "ENOSPC part way" {
				for _, f := range o.Final {
					if f.Stats.BlocksInvalidated != 8 || f.Stats.Reserved == 0 {
						t.Errorf("%s: %d blocks released, %d reserved before ENOSPC; want the first chunk's 8 and its holes", f.Mode, f.Stats.BlocksInvalidated, f.Stats.Reserved)
					}
				}
			}
			end := o.Stops[len(o.Stops)-1]
			if end.Kind != StopEnd || end.Title != "Done: "+tt.want.Returns {
				t.Errorf("the end stop is %s %q, want the title %q", end.Kind, end.Title, "Done: "+tt.want.Returns)
			}
		})
	}
}

// Package source builds the zero-range engine's sources from an image: given an *imgio.Image and a
// path it makes the core.Input the engine runs on (the file's dnode slots, the SIT, the volume's
// geometry and counters, the inode's facts), and names the image's nodes and logs for a player.
// It simulates nothing itself: core does.
package source

import (
	"context"
	"fmt"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// Input finds path in img as open(2) would, following symlinks, and builds the engine's input for
// the file it names.
func Input(img *imgio.Image, path string) (core.Input, error) {
	f, err := img.Resolve(path)
	if err != nil {
		return core.Input{}, err
	}
	return FileInput(img, f)
}

// FileInput builds the engine's input for an already looked-up file.
func FileInput(img *imgio.Image, f *imgio.File) (core.Input, error) {
	in := core.Input{Path: f.Path(), Volume: Volume(img.Volume()), Inode: Inode(f.Inode()), SIT: img}
	end, starts, err := slotsEnd(f)
	if err != nil {
		return core.Input{}, fmt.Errorf("source: %s: %w", f.Path(), err)
	}
	in.Inode.SlotsEnd = end
	in.Slots = &fileSlots{File: f, starts: starts}
	return in, nil
}

// UnlinkRequest is the request of unlink(2) on path: the name is looked up without following a
// final symbolic link (an unlink removes the link itself), and the directory holding it says where
// its dentry lives ([core.Request.DentryInline]). in is the input of the file the name gives.
func UnlinkRequest(ctx context.Context, img *imgio.Image, path string) (in core.Input, req core.Request, err error) {
	f, err := img.LookupContext(ctx, path)
	if err != nil {
		return core.Input{}, core.Request{}, err
	}
	inline, err := DentryInline(ctx, img, path)
	if err != nil {
		return core.Input{}, core.Request{}, err
	}
	if in, err = FileInput(img, f); err != nil {
		return core.Input{}, core.Request{}, err
	}
	return in, core.Request{Op: core.OpUnlink, DentryInline: inline}, nil
}

// DentryInline says whether the directory that holds path's last name keeps its dentries in its
// inode (F2FS_INLINE_DENTRY): what an unlink's f2fs_delete_entry dirties.
func DentryInline(ctx context.Context, img *imgio.Image, path string) (bool, error) {
	dir, err := img.LookupContext(ctx, parentDir(path))
	if err != nil {
		return false, err
	}
	d := dir.Inode()
	return d.Type == imgio.TypeDir && d.Inline&core.InlineDentry != 0, nil
}

// parentDir is the directory part of an absolute path ("/" for a name in the root).
func parentDir(path string) string {
	p := strings.TrimRight(path, "/")
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// fileSlots is a file's dnode slots (*imgio.File's DnodeSlots) and the list of its existing
// dnodes (core.DnodeLister), read once: a zero over a huge sparse range then costs its existing
// nodes, not one lookup per missing one.
type fileSlots struct {
	*imgio.File
	starts []uint64 // nil for a file without slots (inline, not a regular file): not listed
}

// DnodeStarts lists the file's existing dnodes.
func (f *fileSlots) DnodeStarts() ([]uint64, bool) { return f.starts, f.starts != nil }

// Volume converts the reader's volume description.
func Volume(v imgio.Volume) core.Volume {
	cv := core.Volume{
		BlockSize: v.BlockSize, BlocksPerSeg: v.BlocksPerSeg,
		Segment0Blkaddr: v.Segment0Blkaddr, MainBlkaddr: v.MainBlkaddr, MaxBlkaddr: v.MaxBlkaddr,
		MainSegments: v.MainSegmentCount, SegsPerSec: v.SegsPerSec,
		UserBlockCount: v.UserBlockCount, ValidBlockCount: v.ValidBlockCount, ValidNodeCount: v.ValidNodeCount,
		Trimmed:         v.CheckpointFlags&f2fs.CPTrimmedFlag != 0,
		CheckpointError: v.CheckpointFlags&f2fs.CPErrorFlag != 0,
	}
	for _, c := range v.CurrentSegments {
		cv.CurrentSegments = append(cv.CurrentSegments, c.Segno)
		switch c.Log {
		case f2fs.CursegHotData:
			cv.HotDataSegno, cv.HotDataBlkoff = c.Segno, uint32(c.Blkoff)
		case f2fs.CursegWarmData:
			cv.WarmDataSegno, cv.WarmDataBlkoff = c.Segno, uint32(c.Blkoff)
		case f2fs.CursegColdData:
			cv.ColdDataSegno, cv.ColdDataBlkoff = c.Segno, uint32(c.Blkoff)
		}
	}
	return cv
}

// Inode converts the reader's inode facts (SlotsEnd is left 0; see
// [FileInput]).
func Inode(i imgio.Inode) core.Inode {
	t := string(i.Type)
	switch i.Type {
	case "file", "dir", "symlink":
	default:
		t = "other"
	}
	return core.Inode{Ino: i.Ino, Type: t, Size: i.Size, Blocks: i.Blocks, AddrsPerInode: i.AddrsPerInode,
		AddrsPerBlock: i.AddrsPerBlock, Inline: i.Inline, Advise: i.Advise, Flags: i.Flags,
		ClusterSize: i.ClusterSize, ComprBlocks: i.ComprBlocks,
		ReadExt: core.ReadExtent{Fofs: i.Ext.Fofs, Len: i.Ext.Len},
		Blkaddr: i.Blkaddr, XattrNid: i.XattrNid, Links: i.Links}
}

// slotsEnd is one past the file's last non-NULL slot, found from its last
// existing dnodes (Extents would refuse the corrupt addresses a user may
// want to see the engine reject).
func slotsEnd(f *imgio.File) (uint64, []uint64, error) {
	if f.Inode().Type != "file" || f.Inode().Inline&(core.InlineData|core.InlineDentry) != 0 {
		return 0, nil, nil
	}
	ds, err := f.Dnodes()
	if err != nil {
		return 0, nil, err
	}
	starts := make([]uint64, len(ds))
	for i, d := range ds {
		starts[i] = d.Start
	}
	for i := len(ds) - 1; i >= 0; i-- {
		d, err := f.Dnode(ds[i].Start)
		if err != nil {
			return 0, nil, err
		}
		for k := len(d.Slots) - 1; k >= 0; k-- {
			if d.Slots[k] != core.NullAddr {
				return d.Start + uint64(k) + 1, starts, nil
			}
		}
	}
	return 0, starts, nil
}

// Describer names what an image holds for a player: the node ids of a file's dnodes and the log
// type of segments (it satisfies player.Describer without importing it).
type Describer struct {
	img *imgio.Image
	f   *imgio.File
}

// NewDescriber describes file f of img.
func NewDescriber(img *imgio.Image, f *imgio.File) *Describer { return &Describer{img: img, f: f} }

// DnodeID returns the kind and nid of the existing dnode holding index; ok is false when it does
// not exist or cannot be read.
func (d *Describer) DnodeID(index uint64) (kind string, nid uint32, ok bool) {
	dn, err := d.f.Dnode(index)
	if err != nil || dn.Nid == 0 {
		return "", 0, false
	}
	return dn.Kind, dn.Nid, true
}

// SegmentType returns the log type (0..5) of a main-area segment, or -1.
func (d *Describer) SegmentType(segno uint32) int {
	sg, err := d.img.Segment(segno)
	if err != nil {
		return -1
	}
	return sg.Type
}

package source

import (
	"context"
	"fmt"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// Owners finds the owners of an image's data blocks for a core.Seq's garbage collection: the
// block's summary entry, confirmed by the slot it names (imgio's block inspector).
type Owners struct {
	ctx context.Context
	img *imgio.Image
}

// NewOwners returns the owners of img's blocks; ctx bounds each look-up.
func NewOwners(ctx context.Context, img *imgio.Image) *Owners { return &Owners{ctx: ctx, img: img} }

// Owner returns the inode and file block index whose slot holds data block addr.
func (o *Owners) Owner(addr uint32) (uint32, uint64, bool, error) {
	return o.img.DataOwner(o.ctx, addr)
}

// InodeBlock returns the block of inode ino's node block: its NAT entry (core.InodeBlocker).
func (o *Owners) InodeBlock(ino uint32) (uint32, error) {
	e, err := o.img.NAT(ino)
	if err != nil {
		return 0, fmt.Errorf("source: NAT entry of inode %d: %w", ino, err)
	}
	return e.BlockAddr, nil
}

// File returns the input for inode ino.
func (o *Owners) File(ino uint32) (core.Input, error) {
	f, err := o.img.File(ino)
	if err != nil {
		return core.Input{}, fmt.Errorf("source: inode %d: %w", ino, err)
	}
	return FileInput(o.img, f)
}

// NewSeq starts a mount of img whose zero-range walks run in mode, with the image's segment
// manager (core.Seq.MountGC): checkpoint and gc operations run, and so does the garbage
// collection f2fs_balance_fs runs inside an operation on a volume short of free sections. ctx
// bounds every operation run on it (core.Seq.SetContext).
func NewSeq(ctx context.Context, img *imgio.Image, mode core.Mode) (*core.Seq, error) {
	q := core.NewSeq(mode)
	q.SetContext(ctx)
	v, err := GCVolume(img)
	if err != nil {
		return nil, err
	}
	// The owners outlive the request that mounted the sequence: a state the next panel keeps
	// (web/next.go, gc.State.AtClock) looks blocks up through its segment manager's callbacks
	// (NodeOf, PostRead) for later requests, and a cancelled context there would make every move
	// count as a page of its own — a different answer, not a refusal. Each look-up is one bounded
	// block read; ctx (SetContext) still bounds the sequence's own loops.
	if err := q.MountGC(Volume(img.Volume()), img, v, NewOwners(context.WithoutCancel(ctx), img)); err != nil {
		return nil, err
	}
	return q, nil
}

// NodeOf is gc.State's NodeOf for a segment manager mounted on img without a core.Seq (the gc API
// and page): the file and the dnode whose slot holds data block b, by the block's summary entry
// (ok false when no file's slot holds it), so the dirty node pages the cleaner's moves make are
// counted by page (f2fs_need_SSR, __get_secs_required). Inodes are read once; ctx bounds the
// look-ups.
func NodeOf(ctx context.Context, img *imgio.Image) func(b gc.Block) (uint32, uint64, bool) {
	o := NewOwners(ctx, img)
	main := img.Volume().MainBlkaddr
	inodes := map[uint32]*core.Inode{}
	return func(b gc.Block) (uint32, uint64, bool) {
		ino, idx, ok, err := o.Owner(f2fs.SegBlock(main, b.Segno) + b.Blkoff)
		if err != nil || !ok {
			return 0, 0, false
		}
		in, seen := inodes[ino]
		if !seen {
			f, err := o.File(ino)
			if err != nil {
				return 0, 0, false
			}
			in = &f.Inode
			inodes[ino] = in
		}
		return ino, in.DnodeStart(idx), true
	}
}

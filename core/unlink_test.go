package core

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestUnlinkAgainstReference: on random files (NULL, NEW, repeated and out-of-main addresses,
// dnodes) an unlink is, call for call, a fresh truncate to 0 (refTruncOp, the kernel's loops
// written out) followed by one call for the inode's own block, and it takes that block and node
// off the counts; its last events are the inode's truncate_node and the unlink's return.
func TestUnlinkAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 2))
	for i := range sweep(300) {
		st := truncTestState(r, 1+r.IntN(60))
		st.ino.Blkaddr, st.ino.Links = nodeBase-1-uint32(r.IntN(100)), 1
		st.sit.set(&st.vol, st.ino.Blkaddr)
		req := Request{Op: OpUnlink, DentryInline: true}
		for _, mode := range Modes {
			got, err := Simulate(st.input(), req, mode)
			if err != nil {
				t.Fatalf("case %d %s: %v", i, mode, err)
			}
			want, _, vbc, vnc := refTruncOp(st, Request{Op: OpTruncate}, mode)
			want = append(want, [2]uint32{st.ino.Blkaddr, 1})
			var calls [][2]uint32
			for c := range got.Calls.All() {
				calls = append(calls, [2]uint32{c.Start, c.Len})
			}
			if !slices.Equal(calls, want) {
				t.Fatalf("case %d %s:\n calls %v\n want  %v", i, mode, calls, want)
			}
			if got.ValidBlocks != vbc-1 || got.ValidNodes != vnc-1 || got.SizeAfter != 0 || got.BlocksAfter != 0 || got.Errno != "" {
				t.Fatalf("case %d %s: valid %d/%d size %d blocks %d errno %q; want %d/%d, 0, 0", i, mode, got.ValidBlocks, got.ValidNodes, got.SizeAfter, got.BlocksAfter, got.Errno, vbc-1, vnc-1)
			}
			run, err := NewRun(st.input(), req, mode)
			if err != nil {
				t.Fatal(err)
			}
			var evs []Event
			for {
				ev, ok := run.Next()
				if !ok {
					break
				}
				evs = append(evs, ev)
			}
			if n := len(evs); n < 2 || evs[n-2].Kind != EvNodeFree || evs[n-2].Action != ActUnlink || evs[n-2].Addr != st.ino.Blkaddr || evs[n-1].Kind != EvDone || evs[n-1].Action != ActUnlink {
				t.Fatalf("case %d %s: the last events are not the inode's truncate_node and the return: %+v", i, mode, evs[max(0, len(evs)-2):])
			}
		}
	}
}

// TestUnlinkRefusals: what an unlink asks that the input does not say is refused naming the
// kernel function, before any call; the VFS's checks give the kernel's errno.
func TestUnlinkRefusals(t *testing.T) {
	base := func() *state {
		st := truncTestState(rand.New(rand.NewPCG(36, 3)), 20)
		st.ino.Blkaddr, st.ino.Links = nodeBase-1, 1
		st.sit.set(&st.vol, st.ino.Blkaddr)
		return st
	}
	for _, c := range []struct {
		name   string
		edit   func(*state, *Request)
		refuse string // the function named; "" for an errno
		errno  string
	}{
		{"dentry block", func(_ *state, r *Request) { r.DentryInline = false }, "f2fs_delete_entry", ""},
		{"inode address unknown", func(st *state, _ *Request) { st.ino.Blkaddr = 0 }, "f2fs_write_node_page", ""},
		{"xattr node", func(st *state, _ *Request) { st.ino.XattrNid = 99 }, "f2fs_truncate_xattr_node", ""},
		{"symlink", func(st *state, _ *Request) { st.ino.Type = "symlink" }, "f2fs_evict_inode", ""},
		{"hard links", func(st *state, _ *Request) { st.ino.Links = 2 }, "f2fs_drop_nlink", ""},
		{"no link count", func(st *state, _ *Request) { st.ino.Links = 0 }, "f2fs_unlink", ""},
		{"directory", func(st *state, _ *Request) { st.ino.Type = "dir" }, "", "EISDIR"},
		{"immutable", func(st *state, _ *Request) { st.ino.Flags |= FlagImmutable }, "", "EPERM"},
		{"checkpoint error", func(st *state, _ *Request) { st.vol.CheckpointError = true }, "", "EIO"},
		{"answered", func(*state, *Request) {}, "", ""},
	} {
		st, req := base(), Request{Op: OpUnlink, DentryInline: true}
		c.edit(st, &req)
		// CheckUnlink, what a page asks before it opens a player, says the same before any walk.
		if err := CheckUnlink(st.input(), req); (c.refuse == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.refuse) {
			t.Errorf("%s: CheckUnlink %v, want a refusal naming %q", c.name, err, c.refuse)
		}
		for _, mode := range Modes {
			got, err := Simulate(st.input(), req, mode)
			if c.refuse != "" {
				if !errors.Is(err, ErrUnmodelled) || !strings.Contains(err.Error(), c.refuse) {
					t.Errorf("%s %s: want refused naming %s, got %v", c.name, mode, c.refuse, err)
				}
				continue
			}
			if err != nil || got.Errno != c.errno || (got.Calls.Len() != 0) != (c.errno == "") {
				t.Errorf("%s %s: errno %q, %d calls, %v; want %q (calls only without an errno)", c.name, mode, got.Errno, got.Calls.Len(), err, c.errno)
			}
		}
	}
}

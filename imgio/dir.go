package imgio

import (
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// PathMax is Linux's PATH_MAX. A path handed to open(2) must fit in it together with its terminating
// NUL, so the longest path is PathMax-1 bytes; getname() refuses a longer one with ENAMETOOLONG.
// Listings leave out (and report) an entry whose path would be longer, so a chain of directories can
// be no deeper than what open(2) could name from the root, and [Image.Lookup] and [Image.Resolve]
// refuse such a path with [ErrNameTooLong].
const PathMax = 4096

// NameMax is the longest name a directory entry holds: F2FS_NAME_LEN, the kernel's NAME_MAX.
const NameMax = maxNameLen

// ErrNameTooLong reports a path of [PathMax] bytes or more, or a name longer than [NameMax] bytes
// (ENAMETOOLONG). It comes wrapped in a *fs.PathError.
var ErrNameTooLong = errors.New("file name too long")

// Entry is one path of an image.
type Entry struct {
	Path string   `json:"path"`
	Ino  uint32   `json:"ino"`
	Type FileType `json:"type"`
	Size int64    `json:"size"`
}

// dirent is one decoded directory entry.
type dirent struct {
	name  string
	ino   uint32
	ftype uint8 // F2FS_FT_*
	off   int64 // byte offset of its struct f2fs_dir_entry in the image
}

// ListProblem is damage a listing met and stepped over: the entries it concerns are left out and the
// listing goes on with the rest of the image. Err is a *FormatError (a corrupt or duplicated
// structure, with its byte offset; its Msg uses fsck.f2fs's words "duplicated data" and "duplicated
// node block" where fsck reports the same thing), a *fs.PathError wrapping [ErrNameTooLong] (a path
// longer than [PathMax]), or an *UnsupportedError.
type ListProblem struct {
	Path  string // the directory or entry concerned
	Count int    // times it was met: a dentry block that 3,000 slots point at is listed once and counts 2,999
	Err   error
}

// Error reads "PATH: ERR", with the count when the problem was met more than once.
func (p ListProblem) Error() string {
	if p.Count > 1 {
		return fmt.Sprintf("%s: %v (%d times)", p.Path, p.Err, p.Count)
	}
	return fmt.Sprintf("%s: %v", p.Path, p.Err)
}

// Unwrap returns Err, so errors.As finds the *FormatError in a ListProblem.
func (p ListProblem) Unwrap() error { return p.Err }

// MarshalJSON writes {"path", "count", "error", "offset"}; offset is the *FormatError's byte offset
// and is left out for other errors.
func (p ListProblem) MarshalJSON() ([]byte, error) {
	v := struct {
		Path   string `json:"path"`
		Count  int    `json:"count"`
		Error  string `json:"error"`
		Offset *int64 `json:"offset,omitempty"`
	}{Path: p.Path, Count: p.Count, Error: fmt.Sprint(p.Err)}
	var fe *FormatError
	if errors.As(p.Err, &fe) {
		v.Offset = &fe.Off
	}
	return json.Marshal(v)
}

// MaxListProblems bounds the problems a listing keeps in [ListProblems].List; further ones are only counted.
const MaxListProblems = 100

// ListProblems is what a listing stepped over: the first [MaxListProblems] problems, and how many more there
// were. A hostile image can hold millions of damaged entries; the bound keeps the report small.
type ListProblems struct {
	List    []ListProblem `json:"list"`
	Dropped int           `json:"dropped"` // problems met after List was full (repeats of one count once)
}

// Len is the number of problems met: len(List) + Dropped.
func (ps ListProblems) Len() int { return len(ps.List) + ps.Dropped }

// add keeps p if there is room and returns its index in List, or -1 when it was only counted.
func (ps *ListProblems) add(p ListProblem) int {
	if len(ps.List) >= MaxListProblems {
		ps.Dropped++
		return -1
	}
	if p.Count == 0 {
		p.Count = 1
	}
	ps.List = append(ps.List, p)
	return len(ps.List) - 1
}

// ListError is what [Image.Files] returns, together with every entry it listed, when the listing
// stepped over problems. errors.As finds each problem's *FormatError through it.
type ListError struct {
	Problems ListProblems
}

// Error names the number of problems and the first one.
func (e *ListError) Error() string {
	if len(e.Problems.List) == 0 {
		return "imgio: listing met problems"
	}
	if n := e.Problems.Len(); n > 1 {
		return fmt.Sprintf("imgio: listing stepped over %d problems, the first: %v", n, e.Problems.List[0])
	}
	return fmt.Sprintf("imgio: listing stepped over a problem: %v", e.Problems.List[0])
}

// Unwrap returns the problems kept.
func (e *ListError) Unwrap() []error {
	out := make([]error, len(e.Problems.List))
	for i, p := range e.Problems.List {
		out[i] = p
	}
	return out
}

// isDamage reports whether err describes the image (corrupt or unsupported structures) rather than a
// failure to read it or a cancelled context: damage is stepped over by listings, the rest ends them.
func isDamage(err error) bool {
	var fe *FormatError
	var ue *UnsupportedError
	return errors.As(err, &fe) || errors.As(err, &ue) || errors.Is(err, ErrNameTooLong)
}

// parseDentries calls fn for each entry of an area of nr slots laid out as bitmap, dentries and name
// slots (struct f2fs_dentry_block or the inline dentry area); off is the byte offset of the area in
// the image. Damaged entries are reported to bad and skipped, as the kernel's lookup skips them (a
// name_len of 0), or would fail on them. It returns false when fn asked to stop.
func parseDentries(area []byte, nr, bitmapOff, dentryOff, nameOff int, off int64, encrypted bool, maxNid uint32,
	bad func(error), fn func(dirent) bool) bool {
	bitmap := area[bitmapOff : bitmapOff+(nr+7)/8]
	for i := 0; i < nr; {
		if bitmap[i/8]&(1<<(i%8)) == 0 {
			i++
			continue
		}
		var de rawDirEntry
		eo := dentryOff + i*dentrySize
		binary.Decode(area[eo:eo+dentrySize], binary.LittleEndian, &de)
		if de.NameLen == 0 {
			// A set bit with an empty name is corrupt; the kernel skips it too.
			i++
			continue
		}
		slots := (int(de.NameLen) + dentrySlotLen - 1) / dentrySlotLen
		if de.NameLen > maxNameLen || i+slots > nr {
			bad(formatErr(off+int64(eo), "dentry", "name runs past the dentry area", de.NameLen))
			i++
			continue
		}
		no := nameOff + i*dentrySlotLen
		raw := area[no : no+int(de.NameLen)]
		i += slots
		name := string(raw)
		if encrypted {
			// Ciphertext names are arbitrary bytes; show them as hex so paths stay printable and unique.
			name = "~" + hex.EncodeToString(raw)
		} else if strings.ContainsAny(name, "/\x00") {
			bad(formatErr(off+int64(no), "dentry", "name contains '/' or NUL", name))
			continue
		}
		if name == "." || name == ".." {
			continue
		}
		if de.Ino == 0 || de.Ino >= maxNid {
			bad(formatErr(off+int64(eo), "dentry", fmt.Sprintf("%q: inode number out of range", name), de.Ino))
			continue
		}
		if !fn(dirent{name: name, ino: de.Ino, ftype: de.FileType, off: off + int64(eo)}) {
			return false
		}
	}
	return true
}

// errStopScan ends a dnode walk early; it never leaves the package.
var errStopScan = errors.New("imgio: scan stopped")

// blockUse is where a dentry block was first met: the directory and the block index in it.
type blockUse struct {
	dir   uint32
	index uint64
}

// lister reads directories for one listing or one lookup. Each dentry block is read at most once:
// a block met a second time (a second slot of one directory, or another directory, pointing at it)
// is corruption that fsck.f2fs reports as "Duplicated data"; it is counted, not listed again. So a
// directory lists at most 214 entries per distinct dentry block (plus its inline area), however many
// slots it has.
type lister struct {
	img    *Image
	ctx    context.Context
	strict bool                // lookups: a dentry block that cannot be read ends the scan with its error
	blocks map[uint32]blockUse // dentry blocks read so far
	dups   map[uint32]int      // duplicated dentry block → index of its problem (-1: only counted)
	dirs   map[uint32]string   // Walk: directories listed so far, inode → path
	probs  ListProblems
}

func (img *Image) newLister(ctx context.Context, strict bool) *lister {
	return &lister{img: img, ctx: ctx, strict: strict, blocks: map[uint32]blockUse{}, dups: map[uint32]int{}}
}

func (l *lister) problem(path string, err error) { l.probs.add(ListProblem{Path: path, Err: err}) }

// duplicate counts a dentry block reached again from directory ino at index idx.
func (l *lister) duplicate(path string, addr, ino uint32, idx uint64, first blockUse) {
	if i, ok := l.dups[addr]; ok {
		if i >= 0 {
			l.probs.List[i].Count++
		}
		return
	}
	err := formatErr(l.img.blockOff(addr), "dentry block",
		fmt.Sprintf("duplicated data: inode %d index %d points at the block already listed for inode %d index %d",
			ino, idx, first.dir, first.index), addr)
	l.dups[addr] = l.probs.add(ListProblem{Path: path, Count: 1, Err: err})
}

// scanDir calls fn for each entry of directory dir in on-disk order: the inline area, or the dentry
// blocks within i_size in file order, each distinct block once. fn returns false to stop. Damage is
// recorded as problems of path and stepped over, except in a strict lister, where a dentry block or
// dnode that cannot be read ends the scan with its error (as it ends the kernel's lookup). The
// context is checked before every block.
func (l *lister) scanDir(dir *File, path string, fn func(dirent) bool) error {
	img := l.img
	in := &dir.inode
	if in.Type != TypeDir {
		return fmt.Errorf("imgio: inode %d: %w", in.Ino, fs.ErrInvalid)
	}
	if err := l.ctx.Err(); err != nil {
		return err
	}
	bad := func(err error) { l.problem(path, err) }
	enc := in.Advise&adviseEncrypt != 0
	if in.Inline&inlineDentry != 0 {
		// Inline dentry area (f2fs make_dentry_ptr_inline): NR entries need 19 bytes and one bit each.
		size := img.maxInline(*in)
		nr := size * 8 / ((dentrySize+dentrySlotLen)*8 + 1)
		bm := (nr + 7) / 8
		rsvd := size - (dentrySize+dentrySlotLen)*nr - bm
		o := inlineOff(*in)
		parseDentries(dir.blk[o:o+size], nr, 0, bm+rsvd, bm+rsvd+nr*dentrySize,
			img.blockOff(in.Blkaddr)+int64(o), enc, img.maxNid, bad, fn)
		return nil
	}
	bs := uint64(img.bs)
	nblocks := (uint64(in.Size) + bs - 1) / bs
	const names = dentryBitmapLen + dentryBlockRsvd + nrDentryInBlock*dentrySize
	err := dir.walk(func(d Dnode, blk []byte) error {
		if d.Start >= nblocks {
			return errStopScan
		}
		var slots []uint32
		if blk == nil {
			slots = dir.inodeSlots()
		}
		for i := range d.Len {
			idx := d.Start + uint64(i)
			if idx >= nblocks {
				return errStopScan
			}
			var a uint32
			if blk == nil {
				a = slots[i]
			} else {
				a = binary.LittleEndian.Uint32(blk[4*i:])
			}
			if a == NullAddr || a == NewAddr {
				continue
			}
			if err := l.ctx.Err(); err != nil {
				return err
			}
			if !img.validMain(a) {
				err := formatErr(img.blockOff(d.Blkaddr), "dentry block address", fmt.Sprintf("dir %d index %d", in.Ino, idx), a)
				if l.strict {
					return err
				}
				bad(err)
				continue
			}
			if first, ok := l.blocks[a]; ok {
				l.duplicate(path, a, in.Ino, idx, first)
				continue
			}
			l.blocks[a] = blockUse{in.Ino, idx}
			db, err := img.readBlock(a, "dentry block")
			if err != nil {
				if l.strict || !isDamage(err) {
					return err
				}
				bad(err)
				continue
			}
			if !parseDentries(db, nrDentryInBlock, 0, dentryBitmapLen+dentryBlockRsvd, names,
				img.blockOff(a), enc, img.maxNid, bad, fn) {
				return errStopScan
			}
		}
		return nil
	})
	switch {
	case err == nil || errors.Is(err, errStopScan):
		return nil
	case !l.strict && isDamage(err):
		// A node of the directory cannot be read: list what came before it.
		bad(err)
		return nil
	}
	return err
}

// readDirents returns the entries of dir sorted by name, a name met twice kept once (the first in
// on-disk order, which is the one a lookup finds) and reported.
func (l *lister) readDirents(dir *File, path string) ([]dirent, error) {
	var out []dirent
	seen := map[string]struct{}{}
	err := l.scanDir(dir, path, func(d dirent) bool {
		if _, dup := seen[d.name]; dup {
			l.problem(path, formatErr(d.off, "dentry", fmt.Sprintf("%q: name already in directory %d", d.name, dir.inode.Ino), nil))
			return true
		}
		seen[d.name] = struct{}{}
		out = append(out, d)
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// dirEntries lists a directory for the fs view: each name once, sorted, damage stepped over.
func (img *Image) dirEntries(ctx context.Context, f *File) ([]dirent, error) {
	return img.newLister(ctx, false).readDirents(f, f.path)
}

// childPath joins a directory path and a name.
func childPath(dir, name string) string {
	if dir == "/" || dir == "" {
		return "/" + name
	}
	return dir + "/" + name
}

// tooLong is the problem of a path of PathMax bytes or more.
func tooLong(p string) error { return &fs.PathError{Op: "list", Path: p, Err: ErrNameTooLong} }

// Files lists every path reachable from the root, as [Image.Walk] does, into one slice; see
// [Image.FilesContext].
func (img *Image) Files() ([]Entry, error) { return img.FilesContext(context.Background()) }

// FilesContext lists every path reachable from the root: "/" first, then depth first with the entries
// of each directory sorted by name (see [Image.Walk]). When the listing stepped over problems it
// returns every entry it listed together with a *ListError holding them. Any other error (the root
// cannot be read, a read failed, ctx ended) comes with no entries.
//
// The slice grows with the image; a server should page through directories with [Image.ReadDir] or
// stream with [Image.Walk] instead.
func (img *Image) FilesContext(ctx context.Context) ([]Entry, error) {
	var out []Entry
	probs, err := img.Walk(ctx, func(e Entry) error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if probs.Len() > 0 {
		return out, &ListError{Problems: probs}
	}
	return out, nil
}

// Walk calls fn for every path reachable from the root, without building a list: "/" first, then
// depth first with the entries of each directory sorted by name. Hard-linked files appear once per
// name. fn may return fs.SkipDir (on a directory: do not enter it; on another entry: skip the rest of
// its directory) or fs.SkipAll (stop, with no error); any other error stops the walk and is returned.
//
// The walk is bounded by what the kernel allows and steps over damage, returning it as ListProblems:
// a path of [PathMax] bytes or more is not listed; a directory reached a second time (a cycle, or a
// second link) is not listed again ("duplicated node block"); a dentry block reached a second time is
// not read again ("duplicated data"), so a directory holds at most 214 entries per distinct dentry
// block; a name met twice in one directory is listed once; an entry whose inode cannot be read is
// left out. The error is nil unless the root cannot be read, reading fails, fn fails or ctx ends;
// ctx is checked before every dentry block and every entry.
func (img *Image) Walk(ctx context.Context, fn func(Entry) error) (ListProblems, error) {
	l := img.newLister(ctx, false)
	root, err := img.File(img.sb.raw.RootIno)
	if err != nil {
		return l.probs, fmt.Errorf("imgio: root inode: %w", err)
	}
	if root.inode.Type != TypeDir {
		return l.probs, formatErr(img.blockOff(root.inode.Blkaddr), "inode", "root is not a directory", root.inode.Mode)
	}
	root.path = "/"
	l.dirs = map[uint32]string{root.inode.Ino: "/"}
	err = fn(Entry{Path: "/", Ino: root.inode.Ino, Type: TypeDir, Size: root.inode.Size})
	if err == nil {
		err = l.walkDir(root, "", fn)
	}
	if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
		err = nil
	}
	return l.probs, err
}

// walkDir lists dir (at prefix, "" for the root) and what is below it.
func (l *lister) walkDir(dir *File, prefix string, fn func(Entry) error) error {
	img := l.img
	dpath := prefix
	if dpath == "" {
		dpath = "/"
	}
	ents, err := l.readDirents(dir, dpath)
	if err != nil {
		return err
	}
	buf := make([]byte, img.bs) // reused for every inode that is not a directory
	for _, e := range ents {
		if err := l.ctx.Err(); err != nil {
			return err
		}
		p := prefix + "/" + e.name
		if len(p) >= PathMax {
			l.problem(p, tooLong(p))
			continue
		}
		blk, addr, err := img.readNodeInto(buf, e.ino, e.ino, 0, "inode")
		if err == nil {
			var in Inode
			if in, err = img.decodeInode(e.ino, blk, addr); err == nil {
				if err := l.visit(p, in, blk, fn); err != nil {
					if errors.Is(err, fs.SkipDir) && in.Type != TypeDir {
						return nil
					}
					return err
				}
				if in.Type == TypeDir {
					// A directory keeps its block (scanDir reads it); the next inode gets a fresh buffer.
					buf = make([]byte, img.bs)
				}
				continue
			}
		}
		if !isDamage(err) {
			return fmt.Errorf("imgio: %s: %w", p, err)
		}
		l.problem(p, err)
	}
	return nil
}

// visit hands one entry to fn and, for a directory seen for the first time, walks into it.
func (l *lister) visit(p string, in Inode, blk []byte, fn func(Entry) error) error {
	if in.Type == TypeDir {
		if first, ok := l.dirs[in.Ino]; ok {
			l.problem(p, formatErr(l.img.blockOff(in.Blkaddr), "directory",
				fmt.Sprintf("duplicated node block: directory inode %d is already listed as %s", in.Ino, first), in.Ino))
			return nil
		}
		l.dirs[in.Ino] = p
	}
	if err := fn(Entry{Path: p, Ino: in.Ino, Type: in.Type, Size: in.Size}); err != nil {
		if errors.Is(err, fs.SkipDir) && in.Type == TypeDir {
			return nil
		}
		return err
	}
	if in.Type != TypeDir {
		return nil
	}
	return l.walkDir(&File{img: l.img, path: p, inode: in, blk: blk}, p, fn)
}

// MaxDirPage is the most entries one [Image.ReadDir] page holds, and the size of a page when the
// caller asks for 0.
const MaxDirPage = 1000

// DirPage is one page of a directory listing, from [Image.ReadDir].
type DirPage struct {
	Dir      Entry        `json:"dir"`            // the directory itself
	Entries  []Entry      `json:"entries"`        // sorted by name
	More     bool         `json:"more"`           // names remain after this page
	Next     string       `json:"next,omitempty"` // when More: the after of the next page
	Problems ListProblems `json:"problems"`       // damage met in this directory (see Image.Walk)
}

// ReadDir returns one page of directory dir (an absolute path, looked up without following
// symlinks): up to limit entries whose names sort after after ("" for the first page), sorted by
// name, each with its inode number, type and size. limit ≤ 0 or over [MaxDirPage] means MaxDirPage.
// Pass the page's Next as after to get the following one.
//
// Only the page's entries have their inodes read, and memory is bounded by the page, not by the
// directory: the directory's dentry blocks are scanned once per call, each distinct block once. What
// a directory shows on its own is checked as in [Image.Walk] (a dentry block reached twice, a name
// met twice, damaged entries, paths over [PathMax], unreadable inodes) and returned as ListProblems; a
// directory reached from two places can only be seen by a walk of the whole tree. An entry left out
// for a problem still counts as examined, so a page may hold fewer than limit entries while More is
// true.
func (img *Image) ReadDir(ctx context.Context, dir string, after string, limit int) (DirPage, error) {
	if limit <= 0 || limit > MaxDirPage {
		limit = MaxDirPage
	}
	f, err := img.LookupContext(ctx, dir)
	if err != nil {
		return DirPage{}, err
	}
	if f.inode.Type != TypeDir {
		return DirPage{}, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrInvalid}
	}
	page := DirPage{Dir: Entry{Path: f.path, Ino: f.inode.Ino, Type: f.inode.Type, Size: f.inode.Size}, Entries: []Entry{}}
	l := img.newLister(ctx, false)
	// Keep the limit+1 smallest names after `after`: the page, and one more to know whether any
	// remain. A name already kept is a duplicate (the copy kept is the first on disk); a name once
	// dropped for being too large never comes back, so its copies are dropped with it.
	sel := &nameHeap{at: map[string]int{}}
	err = l.scanDir(f, f.path, func(d dirent) bool {
		if d.name <= after {
			return true
		}
		if _, dup := sel.at[d.name]; dup {
			l.problem(f.path, formatErr(d.off, "dentry", fmt.Sprintf("%q: name already in directory %d", d.name, f.inode.Ino), nil))
			return true
		}
		if sel.Len() > limit {
			if d.name > sel.ents[0].name {
				return true
			}
			heap.Pop(sel)
		}
		heap.Push(sel, d)
		return true
	})
	if err != nil {
		return DirPage{}, err
	}
	ents := sel.ents
	slices.SortFunc(ents, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	if len(ents) > limit {
		ents = ents[:limit]
		page.More = true
		page.Next = ents[limit-1].name
	}
	buf := make([]byte, img.bs)
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return DirPage{}, err
		}
		p := childPath(f.path, e.name)
		if len(p) >= PathMax {
			l.problem(p, tooLong(p))
			continue
		}
		blk, addr, err := img.readNodeInto(buf, e.ino, e.ino, 0, "inode")
		if err == nil {
			var in Inode
			if in, err = img.decodeInode(e.ino, blk, addr); err == nil {
				page.Entries = append(page.Entries, Entry{Path: p, Ino: e.ino, Type: in.Type, Size: in.Size})
				continue
			}
		}
		if !isDamage(err) {
			return DirPage{}, fmt.Errorf("imgio: %s: %w", p, err)
		}
		l.problem(p, err)
	}
	page.Problems = l.probs
	return page, nil
}

// nameHeap is a max-heap of dirents by name, with the index of each name for duplicate checks.
type nameHeap struct {
	ents []dirent
	at   map[string]int
}

func (h *nameHeap) Len() int           { return len(h.ents) }
func (h *nameHeap) Less(i, j int) bool { return h.ents[i].name > h.ents[j].name }
func (h *nameHeap) Swap(i, j int) {
	h.ents[i], h.ents[j] = h.ents[j], h.ents[i]
	h.at[h.ents[i].name], h.at[h.ents[j].name] = i, j
}
func (h *nameHeap) Push(x any) {
	d := x.(dirent)
	h.at[d.name] = len(h.ents)
	h.ents = append(h.ents, d)
}
func (h *nameHeap) Pop() any {
	d := h.ents[len(h.ents)-1]
	h.ents = h.ents[:len(h.ents)-1]
	delete(h.at, d.name)
	return d
}

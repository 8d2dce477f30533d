package imgio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// maxSymlinks is Linux's MAXSYMLINKS: path resolution gives ELOOP after following this many links.
const maxSymlinks = 40

// ErrSymlinkLoop reports a path whose resolution follows more than 40 symbolic links (ELOOP).
var ErrSymlinkLoop = errors.New("too many levels of symbolic links")

// resolver walks one path, one component at a time from the directory reached so far, as the
// kernel's path walk does. It keeps what it read for the length of the walk: the inodes, the targets
// of links, and the full index of any directory the walk enters a second time, so a path that loops
// through one directory (an entry pointing back at its own directory) reads that directory's dentry
// blocks once, not once per component. Within one directory every dentry block is read at most once.
type resolver struct {
	img   *Image
	ctx   context.Context
	files map[uint32]*File
	links map[uint32]string
	seen  map[uint32]bool              // directories searched once
	index map[uint32]map[string]uint32 // directories searched again: name → inode, first on disk wins
}

func (img *Image) newResolver(ctx context.Context) *resolver {
	return &resolver{img: img, ctx: ctx, files: map[uint32]*File{}, links: map[uint32]string{},
		seen: map[uint32]bool{}, index: map[uint32]map[string]uint32{}}
}

// file returns inode ino, read once per walk. The *File is shared: copy it before setting its path.
func (r *resolver) file(ino uint32) (*File, error) {
	if f, ok := r.files[ino]; ok {
		return f, nil
	}
	f, err := r.img.File(ino)
	if err != nil {
		return nil, err
	}
	r.files[ino] = f
	return f, nil
}

// find looks name up in directory dir. The first search of a directory stops at the first match in
// on-disk order; a second search of the same directory indexes it whole, once.
func (r *resolver) find(dir *File, name string) (uint32, bool, error) {
	ino := dir.inode.Ino
	if m, ok := r.index[ino]; ok {
		v, ok := m[name]
		return v, ok, nil
	}
	l := r.img.newLister(r.ctx, true)
	if r.seen[ino] {
		m := map[string]uint32{}
		err := l.scanDir(dir, "", func(d dirent) bool {
			if _, ok := m[d.name]; !ok {
				m[d.name] = d.ino
			}
			return true
		})
		if err != nil {
			return 0, false, err
		}
		r.index[ino] = m
		v, ok := m[name]
		return v, ok, nil
	}
	r.seen[ino] = true
	var found uint32
	ok := false
	err := l.scanDir(dir, "", func(d dirent) bool {
		if d.name == name {
			found, ok = d.ino, true
			return false
		}
		return true
	})
	return found, ok, err
}

// linkTarget returns the target of a symlink as the kernel reads it (page_get_link): at most one
// block less one byte, up to the first NUL, whatever i_size claims.
func (r *resolver) linkTarget(f *File) (string, error) {
	if t, ok := r.links[f.inode.Ino]; ok {
		return t, nil
	}
	img := r.img
	limit := int64(img.bs) - 1
	var b []byte
	switch {
	case f.inode.Inline&inlineData != 0:
		data, err := f.ReadInline()
		if err != nil {
			return "", err
		}
		b = data
	case f.inode.Advise&adviseEncrypt != 0:
		return "", &UnsupportedError{Feature: "encrypted symlink", Off: img.blockOff(f.inode.Blkaddr)}
	default:
		d, err := f.Dnode(0)
		if err != nil {
			return "", err
		}
		a := d.Slots[0]
		switch {
		case a == NullAddr || a == NewAddr:
			// Reads as zeros: an empty target.
		case a == CompressAddr:
			return "", &UnsupportedError{Feature: "compressed symlink", Off: img.blockOff(f.inode.Blkaddr)}
		case !img.validMain(a):
			return "", formatErr(img.blockOff(d.Blkaddr), "data slot", fmt.Sprintf("symlink %d index 0: address out of the main area", f.inode.Ino), a)
		default:
			blk, err := img.readBlock(a, "symlink block")
			if err != nil {
				return "", err
			}
			b = blk[:min(f.inode.Size, limit)]
		}
	}
	if int64(len(b)) > limit {
		b = b[:limit]
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	r.links[f.inode.Ino] = string(b)
	return string(b), nil
}

// Lookup returns the file at path, looked up without following symlinks; see [Image.LookupContext].
func (img *Image) Lookup(path string) (*File, error) {
	return img.LookupContext(context.Background(), path)
}

// LookupContext returns the file at path, an absolute slash-separated path ("/" is the root), without
// following symlinks; "." components are skipped and ".." is an ordinary name. The lookup goes one
// component at a time from the directory reached so far, so it costs what the path's directories
// cost, once each. A missing component, or one below a file, is a *fs.PathError wrapping
// fs.ErrNotExist; a path of [PathMax] bytes or more, or a name over [NameMax] bytes, one wrapping
// [ErrNameTooLong]. ctx is checked for every component and every dentry block.
func (img *Image) LookupContext(ctx context.Context, path string) (*File, error) {
	if len(path) >= PathMax {
		return nil, &fs.PathError{Op: "lookup", Path: path, Err: ErrNameTooLong}
	}
	r := img.newResolver(ctx)
	f, err := r.file(img.sb.raw.RootIno)
	if err != nil {
		return nil, fmt.Errorf("imgio: root inode: %w", err)
	}
	var cur strings.Builder
	for name := range strings.SplitSeq(path, "/") {
		if name == "" || name == "." {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(name) > NameMax {
			return nil, &fs.PathError{Op: "lookup", Path: path, Err: ErrNameTooLong}
		}
		if f.inode.Type != TypeDir {
			return nil, &fs.PathError{Op: "lookup", Path: path, Err: fs.ErrNotExist}
		}
		ino, ok, err := r.find(f, name)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &fs.PathError{Op: "lookup", Path: path, Err: fs.ErrNotExist}
		}
		if f, err = r.file(ino); err != nil {
			return nil, err
		}
		cur.WriteString("/")
		cur.WriteString(name)
	}
	g := *f
	g.path = cur.String()
	if g.path == "" {
		g.path = "/"
	}
	return &g, nil
}

// Resolve returns the file at path as open(2) finds it; see [Image.ResolveContext].
func (img *Image) Resolve(name string) (*File, error) {
	return img.ResolveContext(context.Background(), name)
}

// ResolveContext returns the file at path the way open(2) finds it: symbolic links are followed, in
// the last component and in the directories leading to it, relative targets from the link's
// directory and absolute ones from the image's root; ".." climbs back the way the walk came, and stops
// at the root. [Image.LookupContext] follows none.
//
// The walk keeps the directory reached so far and resolves one component at a time, so its cost is
// linear in the path and its link targets: a directory entry pointing back at its own directory
// costs one more step per component, never a walk from the root. Errors are *fs.PathError: more than
// 40 links (the kernel's MAXSYMLINKS) wrap [ErrSymlinkLoop]; a path of [PathMax] bytes or more, or a
// name over [NameMax] bytes, wrap [ErrNameTooLong]; a missing component or a dangling link wraps
// fs.ErrNotExist. ctx is checked for every component and every dentry block.
func (img *Image) ResolveContext(ctx context.Context, name string) (*File, error) {
	if len(name) >= PathMax {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNameTooLong}
	}
	r := img.newResolver(ctx)
	root, err := r.file(img.sb.raw.RootIno)
	if err != nil {
		return nil, fmt.Errorf("imgio: root inode: %w", err)
	}
	type step struct {
		f    *File
		name string
	}
	var stack []step // the symlink-free path below the root
	cur := func() *File {
		if len(stack) == 0 {
			return root
		}
		return stack[len(stack)-1].f
	}
	pending := strings.Split(name, "/")
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(c) > NameMax {
			return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNameTooLong}
		}
		dir := cur()
		if dir.inode.Type != TypeDir {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		ino, ok, err := r.find(dir, c)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		f, err := r.file(ino)
		if err != nil {
			return nil, err
		}
		if f.inode.Type != TypeSymlink {
			stack = append(stack, step{f, c})
			continue
		}
		if links++; links > maxSymlinks {
			return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlinkLoop}
		}
		target, err := r.linkTarget(f)
		if err != nil {
			return nil, fmt.Errorf("imgio: symlink %s: %w", c, err)
		}
		if target == "" {
			// The kernel's get_link refuses an empty target (a broken symlink) with ENOENT.
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		if target[0] == '/' {
			stack = stack[:0]
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	var p strings.Builder
	for _, s := range stack {
		p.WriteString("/")
		p.WriteString(s.name)
	}
	g := *cur()
	g.path = p.String()
	if g.path == "" {
		g.path = "/"
	}
	return &g, nil
}

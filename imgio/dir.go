package imgio

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// maxDepth bounds directory nesting: PATH_MAX (4096) allows at most 2048 levels of one-byte names.
const maxDepth = 2048

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
}

// parseDentries decodes nr entries laid out as bitmap, dentries and name slots (struct
// f2fs_dentry_block or the inline dentry area); off is the byte offset of the area for errors.
func parseDentries(area []byte, nr, bitmapOff, dentryOff, nameOff int, off int64, encrypted bool, maxNid uint32, out []dirent) ([]dirent, error) {
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
			return nil, formatErr(off+int64(eo), "dentry", "name runs past the dentry area", de.NameLen)
		}
		no := nameOff + i*dentrySlotLen
		raw := area[no : no+int(de.NameLen)]
		name := string(raw)
		if encrypted {
			// Ciphertext names are arbitrary bytes; show them as hex so paths stay printable and unique.
			name = "~" + hex.EncodeToString(raw)
		} else if strings.ContainsAny(name, "/\x00") {
			return nil, formatErr(off+int64(no), "dentry", "name contains '/' or NUL", name)
		}
		i += slots
		if name == "." || name == ".." {
			continue
		}
		if de.Ino == 0 || de.Ino >= maxNid {
			return nil, formatErr(off+int64(eo), "dentry", fmt.Sprintf("%q: inode number out of range", name), de.Ino)
		}
		out = append(out, dirent{name: name, ino: de.Ino, ftype: de.FileType})
	}
	return out, nil
}

// entries lists a directory's entries (without "." and ".."), in on-disk order.
func (f *File) entries() ([]dirent, error) {
	if f.inode.Type != TypeDir {
		return nil, fmt.Errorf("imgio: inode %d: %w", f.inode.Ino, fs.ErrInvalid)
	}
	enc := f.inode.Advise&adviseEncrypt != 0
	if f.inode.Inline&inlineDentry != 0 {
		// Inline dentry area (f2fs make_dentry_ptr_inline): NR entries need 19 bytes and one bit each.
		size := f.img.maxInline(f.inode)
		nr := size * 8 / ((dentrySize+dentrySlotLen)*8 + 1)
		bm := (nr + 7) / 8
		rsvd := size - (dentrySize+dentrySlotLen)*nr - bm
		o := inlineOff(f.inode)
		area := f.blk[o : o+size]
		return parseDentries(area, nr, 0, bm+rsvd, bm+rsvd+nr*dentrySize,
			f.img.blockOff(f.inode.Blkaddr)+int64(o), enc, f.img.maxNid, nil)
	}
	bs := uint64(f.img.bs)
	nblocks := (uint64(f.inode.Size) + bs - 1) / bs
	var out []dirent
	err := f.walk(func(d Dnode, blk []byte) error {
		var slots []uint32
		if blk == nil {
			slots = f.inodeSlots()
		}
		for i := range d.Len {
			idx := d.Start + uint64(i)
			if idx >= nblocks {
				return nil
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
			if !f.img.validMain(a) {
				return formatErr(f.img.blockOff(d.Blkaddr), "dentry block address", fmt.Sprintf("dir %d index %d", f.inode.Ino, idx), a)
			}
			db, err := f.img.readBlock(a, "dentry block")
			if err != nil {
				return err
			}
			const names = dentryBitmapLen + dentryBlockRsvd + nrDentryInBlock*dentrySize
			out, err = parseDentries(db, nrDentryInBlock, 0, dentryBitmapLen+dentryBlockRsvd, names,
				f.img.blockOff(a), enc, f.img.maxNid, out)
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// Files lists every path reachable from the root: "/" first, then depth first with the entries of
// each directory sorted by name. Hard-linked files appear once per name. A directory reached twice
// (a cycle or a second link) is a *FormatError.
func (img *Image) Files() ([]Entry, error) {
	root, err := img.File(img.sb.raw.RootIno)
	if err != nil {
		return nil, fmt.Errorf("imgio: root inode: %w", err)
	}
	if root.inode.Type != TypeDir {
		return nil, formatErr(img.blockOff(root.inode.Blkaddr), "inode", "root is not a directory", root.inode.Mode)
	}
	out := []Entry{{Path: "/", Ino: root.inode.Ino, Type: TypeDir, Size: root.inode.Size}}
	seen := map[uint32]bool{root.inode.Ino: true}
	err = img.listDir(root, "", 1, seen, &out)
	return out, err
}

func (img *Image) listDir(dir *File, prefix string, depth int, seen map[uint32]bool, out *[]Entry) error {
	if depth > maxDepth {
		return formatErr(img.blockOff(dir.inode.Blkaddr), "directory", "nested too deep", depth)
	}
	ents, err := dir.entries()
	if err != nil {
		return fmt.Errorf("imgio: listing %s/: %w", prefix, err)
	}
	slices.SortFunc(ents, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	buf := make([]byte, img.bs) // reused for every inode that is not a directory
	for _, e := range ents {
		p := prefix + "/" + e.name
		if e.ino == 0 || e.ino >= img.maxNid {
			return fmt.Errorf("imgio: %s: inode %d: %w", p, e.ino, fs.ErrNotExist)
		}
		blk, addr, err := img.readNodeInto(buf, e.ino, e.ino, 0, "inode")
		if err != nil {
			return fmt.Errorf("imgio: %s: %w", p, err)
		}
		in, err := img.decodeInode(e.ino, blk, addr)
		if err != nil {
			return fmt.Errorf("imgio: %s: %w", p, err)
		}
		*out = append(*out, Entry{Path: p, Ino: e.ino, Type: in.Type, Size: in.Size})
		if in.Type != TypeDir {
			continue
		}
		// A directory keeps its block (entries() reads it); the next inode gets a fresh buffer.
		f := &File{img: img, inode: in, blk: blk}
		buf = make([]byte, img.bs)
		if seen[e.ino] {
			return formatErr(img.blockOff(f.inode.Blkaddr), "directory", p+": directory reached twice", e.ino)
		}
		seen[e.ino] = true
		f.path = p
		if err := img.listDir(f, p, depth+1, seen, out); err != nil {
			return err
		}
	}
	return nil
}

// Lookup returns the file at path, an absolute slash-separated path ("/" is the root). A missing
// component is reported as a *fs.PathError wrapping fs.ErrNotExist.
func (img *Image) Lookup(path string) (*File, error) {
	f, err := img.File(img.sb.raw.RootIno)
	if err != nil {
		return nil, fmt.Errorf("imgio: root inode: %w", err)
	}
	f.path = "/"
	cur := ""
	for _, name := range strings.Split(path, "/") {
		if name == "" || name == "." {
			continue
		}
		if f.inode.Type != TypeDir {
			return nil, &fs.PathError{Op: "lookup", Path: path, Err: fs.ErrNotExist}
		}
		ents, err := f.entries()
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(ents, func(e dirent) bool { return e.name == name })
		if i < 0 {
			return nil, &fs.PathError{Op: "lookup", Path: path, Err: fs.ErrNotExist}
		}
		if f, err = img.File(ents[i].ino); err != nil {
			return nil, err
		}
		cur += "/" + name
		f.path = cur
	}
	return f, nil
}

// maxSymlinks is Linux's MAXSYMLINKS: path resolution gives ELOOP after following this many links.
const maxSymlinks = 40

// ErrSymlinkLoop reports a path whose resolution follows more than 40 symbolic links (ELOOP).
var ErrSymlinkLoop = errors.New("too many levels of symbolic links")

// Resolve returns the file at path the way open(2) finds it: symbolic links are followed, in the last
// component and in the directories leading to it, relative targets from the link's directory and
// absolute ones from the image's root; ".." climbs, and stops at the root. [Lookup] follows none.
// A loop is a *fs.PathError wrapping [ErrSymlinkLoop]; a dangling link one wrapping fs.ErrNotExist.
func (img *Image) Resolve(name string) (*File, error) {
	pending := strings.Split(name, "/")
	resolved := "/" // symlink-free prefix
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = path.Dir(resolved)
			continue
		}
		next := path.Join(resolved, c)
		f, err := img.Lookup(next)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				pe.Path = name
			}
			return nil, err
		}
		if f.inode.Type != TypeSymlink {
			resolved = next
			continue
		}
		if links++; links > maxSymlinks {
			return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlinkLoop}
		}
		target, err := f.readAll()
		if err != nil {
			return nil, fmt.Errorf("imgio: symlink %s: %w", next, err)
		}
		if strings.HasPrefix(string(target), "/") {
			resolved = "/"
		}
		pending = append(strings.Split(string(target), "/"), pending...)
	}
	return img.Lookup(resolved)
}

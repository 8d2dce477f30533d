package imgio

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"time"
)

// FS returns a read-only [fs.FS] view of the image. Regular files read their data through the slot
// map (holes and NEW_ADDR read as zeros); symlinks are reported with [fs.ModeSymlink] and read as their
// target text. Compressed clusters and encrypted data are an *UnsupportedError. Errors are
// *fs.PathError.
func (img *Image) FS() fs.FS { return imageFS{img} }

type imageFS struct{ img *Image }

func (fsys imageFS) lookup(op, name string) (*File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	f, err := fsys.img.Lookup("/" + name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op, pe.Path = op, name
			return nil, pe
		}
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return f, nil
}

// Open opens the named file or directory.
func (fsys imageFS) Open(name string) (fs.File, error) {
	f, err := fsys.lookup("open", name)
	if err != nil {
		return nil, err
	}
	return &fsFile{f: f, name: name}, nil
}

// ReadLink returns the target of a symlink (fs.ReadLinkFS).
func (fsys imageFS) ReadLink(name string) (string, error) {
	f, err := fsys.lookup("readlink", name)
	if err != nil {
		return "", err
	}
	if f.inode.Type != TypeSymlink {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	b, err := f.readAll()
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return string(b), nil
}

// Lstat describes the named file without following a symlink (fs.ReadLinkFS); the view never follows
// symlinks, so it is Stat.
func (fsys imageFS) Lstat(name string) (fs.FileInfo, error) {
	f, err := fsys.lookup("lstat", name)
	if err != nil {
		return nil, err
	}
	return fileInfo{f: f, name: path.Base(name)}, nil
}

// fileInfo is the fs.FileInfo of an inode.
type fileInfo struct {
	f    *File
	name string
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.f.inode.Size }
func (fi fileInfo) ModTime() time.Time { return fi.f.inode.Mtime }
func (fi fileInfo) IsDir() bool        { return fi.f.inode.Type == TypeDir }
func (fi fileInfo) Sys() any           { return fi.f.inode }
func (fi fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.f.inode.Mode & 0o777)
	switch fi.f.inode.Mode & 0xF000 {
	case 0x4000:
		m |= fs.ModeDir
	case 0xA000:
		m |= fs.ModeSymlink
	case 0x1000:
		m |= fs.ModeNamedPipe
	case 0xC000:
		m |= fs.ModeSocket
	case 0x2000:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case 0x6000:
		m |= fs.ModeDevice
	}
	return m
}

// fsFile is an open file or directory of an imageFS.
type fsFile struct {
	f    *File
	name string
	data []byte // file contents, read on first Read
	read bool
	off  int64
	ents []fs.DirEntry // directory entries, read on first ReadDir
	dpos int
}

func (h *fsFile) Stat() (fs.FileInfo, error) { return fileInfo{f: h.f, name: path.Base(h.name)}, nil }
func (h *fsFile) Close() error               { return nil }

func (h *fsFile) Read(p []byte) (int, error) {
	if h.f.inode.Type == TypeDir {
		return 0, &fs.PathError{Op: "read", Path: h.name, Err: fs.ErrInvalid}
	}
	if !h.read {
		b, err := h.f.readAll()
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: h.name, Err: err}
		}
		h.data, h.read = b, true
	}
	if h.off >= int64(len(h.data)) {
		return 0, io.EOF
	}
	n := copy(p, h.data[h.off:])
	h.off += int64(n)
	return n, nil
}

func (h *fsFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if h.f.inode.Type != TypeDir {
		return nil, &fs.PathError{Op: "readdir", Path: h.name, Err: fs.ErrInvalid}
	}
	if h.ents == nil {
		ents, err := h.f.img.dirEntries(context.Background(), h.f)
		if err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: h.name, Err: err}
		}
		h.ents = make([]fs.DirEntry, 0, len(ents))
		for _, e := range ents {
			f, err := h.f.img.File(e.ino)
			if err != nil {
				return nil, &fs.PathError{Op: "readdir", Path: h.name, Err: err}
			}
			h.ents = append(h.ents, fs.FileInfoToDirEntry(fileInfo{f: f, name: e.name}))
		}
	}
	rest := h.ents[h.dpos:]
	if n > 0 {
		if len(rest) == 0 {
			return nil, io.EOF
		}
		rest = rest[:min(n, len(rest))]
	}
	h.dpos += len(rest)
	return rest, nil
}

// maxReadAll bounds what the fs view reads into memory for one file.
const maxReadAll = 1 << 30

// readAll returns the contents of a regular file or symlink: inline data, or the data blocks through
// the slot map, holes and NEW_ADDR as zeros.
func (f *File) readAll() ([]byte, error) {
	if f.inode.Inline&inlineData != 0 {
		return f.ReadInline()
	}
	if f.inode.Advise&adviseEncrypt != 0 {
		return nil, &UnsupportedError{Feature: "encrypted data", Off: f.img.blockOff(f.inode.Blkaddr)}
	}
	if f.inode.Size > maxReadAll {
		return nil, &UnsupportedError{Feature: "reading files over 1 GiB through FS", Off: f.img.blockOff(f.inode.Blkaddr)}
	}
	ext, err := f.Extents()
	if err != nil {
		return nil, err
	}
	out := make([]byte, f.inode.Size)
	bs := int64(f.img.bs)
	for _, e := range ext {
		switch e.State {
		case StateCompress:
			return nil, &UnsupportedError{Feature: "compressed cluster", Off: f.img.blockOff(f.inode.Blkaddr)}
		case StateAddr:
			from := int64(e.Index) * bs
			if from >= f.inode.Size {
				continue
			}
			to := min(from+int64(e.Count)*bs, f.inode.Size)
			if err := f.img.readAt(out[from:to], f.img.blockOff(e.Addr), "data block"); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

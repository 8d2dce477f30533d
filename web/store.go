package web

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/units"
)

// The data dir (Config.DataDir) holds the stored uploads and the server's temporary files:
//
//	DIR/uploads/<id>/image        an uploaded image, expanded to raw F2FS (sparse: all-zero blocks are holes)
//	DIR/uploads/<id>/meta.json    {"version":1,"id","name","size","format","added"}
//	DIR/uploads/.partial-<rand>/  an upload being received or committed (the same two names)
//	DIR/uploads/.removing-<rand>/ an upload being deleted or evicted
//	DIR/tmp/zrviz-<rand>.img      the demo and command-line images expanded by imgio ([Server.TempDir])
//
// An upload becomes an entry in one step: its .partial- directory, with both files written and
// fsynced, is renamed to <id> and the uploads directory is fsynced. A crash or kill before that leaves
// a .partial- directory, which is never listed and is removed when the upload fails, at Close and at the
// next start; deletion renames the entry to .removing- first, so it also disappears in one step. Only
// names in this list are ever created or removed: anything else found in the directory is left alone.
// The image file's mtime records when the upload was last used, for --max-store's LRU order across
// restarts. One server at a time uses a data dir (an flock on the directory).
const (
	uploadsSubdir  = "uploads"
	tmpSubdir      = "tmp"
	entryImage     = "image"
	entryMeta      = "meta.json"
	partialPrefix  = ".partial-"
	removingPrefix = ".removing-"
	metaVersion    = 1
	// maxMetaSize bounds the meta.json read at start (a damaged entry may hold anything).
	maxMetaSize = 64 << 10
	// touchEvery is how often an image's last use is written to disk while it is used.
	touchEvery = time.Minute
)

// idRE is what an upload's id looks like: 12 lower-case hex digits of the SHA-256 of the bytes
// received.
var idRE = regexp.MustCompile(`^[0-9a-f]{12}$`)

// storedMeta is the JSON of an entry's meta.json.
type storedMeta struct {
	Version int          `json:"version"`
	ID      string       `json:"id"`
	Name    string       `json:"name"`
	Size    int64        `json:"size"`
	Format  imgio.Format `json:"format"`
	Added   time.Time    `json:"added"`
}

// StoredImage is an image the server offers. Its exported fields do not change after it is stored.
type StoredImage struct {
	ID     string       `json:"id"`
	Name   string       `json:"name"`
	Size   int64        `json:"size"`   // expanded (raw) size in bytes
	Format imgio.Format `json:"format"` // the format it arrived in
	Added  time.Time    `json:"added"`
	Image  *imgio.Image `json:"-"`
	// Upload is true for an image received through POST /api/images: stored in the data dir,
	// removable with DELETE and evictable under Config.MaxStore. The demo and the images given to
	// serve on the command line are not.
	Upload bool `json:"upload"`

	st     *store
	file   *os.File // the image file of an upload (imgio.NewImage does not own it)
	dir    string   // the entry's directory for an upload, else ""
	onDisk int64    // bytes an upload's entry takes on disk (allocated blocks)

	// Guarded by st.mu.
	refs     int       // Acquire calls not yet released
	lastUsed time.Time // the last Acquire or release
	touched  time.Time // when lastUsed was last written to disk
	gone     bool      // deleted, evicted or closed: Acquire fails, the last release closes
	closed   bool
}

// Acquire marks si as in use until release is called. An image in use is never evicted by
// Config.MaxStore; one deleted while in use disappears from the listing and from the data dir at
// once, but stays open (Linux keeps an unlinked file readable) until its last user releases it.
//
// Every request on /api/images/{id}/… and /images/{id}/… holds the image for its duration (see
// routes.go). A websocket run must hold it from the upgrade until the connection ends:
//
//	release, err := si.Acquire()
//	if err != nil {
//		return err // deleted or evicted since it was looked up: an ENOTFOUND *Error (404)
//	}
//	defer release()
//
// release may be called more than once; only the first call counts.
func (si *StoredImage) Acquire() (release func(), err error) {
	st := si.st
	if st == nil {
		return func() {}, nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if si.gone {
		return nil, notFound("image", si.ID)
	}
	si.refs++
	si.lastUsed = st.now()
	var once sync.Once
	return func() { once.Do(func() { st.release(si) }) }, nil
}

// store holds the loaded images. An image enters it only once fully opened, so a listed image is
// always usable.
type store struct {
	mu       sync.Mutex
	images   map[string]*StoredImage
	closed   bool  // after removeAll: an upload finishing late is refused
	maxStore int64 // bound on the uploads' bytes on disk; <= 0 none
	onDisk   int64 // sum of onDisk over the uploads in images
	writing  int64 // bytes the uploads in flight have reserved to write (reserveWrite)
	now      func() time.Time
	log      func(msg string, args ...any)
}

func newStore(maxStore int64) *store {
	return &store{images: map[string]*StoredImage{}, maxStore: maxStore, now: time.Now,
		log: func(string, ...any) {}}
}

// add stores si unless its ID is taken; it returns the stored image and whether one was already
// there. After removeAll it stores nothing and returns errClosed.
func (st *store) add(si *StoredImage) (*StoredImage, bool, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, false, errClosed
	}
	if old, ok := st.images[si.ID]; ok {
		return old, true, nil
	}
	st.insertLocked(si)
	return si, false, nil
}

func (st *store) insertLocked(si *StoredImage) {
	si.st = st
	if si.lastUsed.IsZero() {
		si.lastUsed = st.now()
	}
	st.images[si.ID] = si
	if si.Upload {
		st.onDisk += si.onDisk
	}
}

// errClosed: the server is shutting down (503).
var errClosed = &Error{Code: EUNAVAILABLE, Message: "server shutting down"}

func (st *store) get(id string) (*StoredImage, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	si, ok := st.images[id]
	return si, ok
}

// list returns the images, "demo" first, then oldest first.
func (st *store) list() []*StoredImage {
	st.mu.Lock()
	out := make([]*StoredImage, 0, len(st.images))
	for _, si := range st.images {
		out = append(out, si)
	}
	st.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.ID == DemoID) != (b.ID == DemoID) {
			return a.ID == DemoID
		}
		if !a.Added.Equal(b.Added) {
			return a.Added.Before(b.Added)
		}
		return a.ID < b.ID
	})
	return out
}

// release ends one Acquire. The last release of a removed image closes it; the last release of a
// stored upload writes its last use to disk now and then.
func (st *store) release(si *StoredImage) {
	st.mu.Lock()
	si.refs--
	now := st.now()
	si.lastUsed = now
	closeNow := si.refs == 0 && si.gone && !si.closed
	if closeNow {
		si.closed = true
	}
	touch := si.refs == 0 && !si.gone && si.Upload && now.Sub(si.touched) >= touchEvery
	if touch {
		si.touched = now
	}
	st.mu.Unlock()
	if closeNow {
		if err := si.close(); err != nil {
			st.log("closing a removed image", "id", si.ID, "err", err)
		}
	}
	if touch {
		si.touch(now)
	}
}

// touch records t as si's last use on disk (the image file's mtime).
func (si *StoredImage) touch(t time.Time) {
	if si.dir == "" {
		return
	}
	if err := os.Chtimes(filepath.Join(si.dir, entryImage), t, t); err != nil && !errors.Is(err, fs.ErrNotExist) {
		si.st.log("recording an image's last use", "id", si.ID, "err", err)
	}
}

// remove takes the upload id out of the store for DELETE. It returns the image and whether it is
// unused (the caller then closes it; else its last release does).
func (st *store) remove(id string) (*StoredImage, bool, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	si, ok := st.images[id]
	if !ok {
		return nil, false, notFound("image", id)
	}
	if !si.Upload {
		return nil, false, Errorf(ECONFLICT, "image %q: only uploaded images can be deleted", id) // the demo, or an image given on the command line
	}
	st.forgetLocked(si)
	unused := si.refs == 0
	if unused {
		si.closed = true
	}
	return si, unused, nil
}

func (st *store) forgetLocked(si *StoredImage) {
	delete(st.images, si.ID)
	si.gone = true
	if si.Upload {
		st.onDisk -= si.onDisk
	}
}

// storeFull is an upload that does not fit under Config.MaxStore (limit) even after every unused
// upload is evicted (507), or that is larger than the bound by itself (413). need is the bytes the
// new upload takes on disk, inUse those held by uploads in use, which are never evicted.
func storeFull(need, limit, inUse int64) *Error {
	if need > limit {
		return Errorf(ETOOLARGE, "the image needs %s or more on disk, more than the server stores in all (%s, zrviz serve --max-store)",
			units.Bytes(need), units.Bytes(limit))
	}
	return Errorf(ESTOREFULL, "the store is full: %s of uploads in use or being received cannot be evicted to make room for %s (limit %s, zrviz serve --max-store)",
		units.Bytes(inUse), units.Bytes(need), units.Bytes(limit))
}

// uploadStep is how much an upload in flight reserves at a time against Config.MaxStore.
const uploadStep = 8 << 20

// reserveWrite reserves step bytes of the store (or, when they do not fit, the need bytes the write
// at hand takes) for an upload in flight, before it writes them, and returns how much: the
// uploads in flight together, with the uploads in use (never evicted), stay under maxStore, so
// concurrent uploads cannot grow the data dir past it while they stream (each is also bounded by
// maxStore alone). Unused uploads count as free: commit evicts them.
// total is what the upload will have written with this write: past maxStore alone, it is too
// large (413) whatever else is stored.
func (st *store) reserveWrite(total, need, step int64) (int64, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.maxStore <= 0 {
		st.writing += step
		return step, nil
	}
	if total > st.maxStore {
		return 0, storeFull(total, st.maxStore, 0)
	}
	var inUse int64
	for _, si := range st.images {
		if si.Upload && si.refs > 0 {
			inUse += si.onDisk
		}
	}
	n := step
	if inUse+st.writing+n > st.maxStore {
		n = need
	}
	if inUse+st.writing+n > st.maxStore {
		return 0, storeFull(min(n+st.writing, st.maxStore), st.maxStore, inUse+st.writing)
	}
	st.writing += n
	return n, nil
}

// releaseWrite gives back what reserveWrite reserved.
func (st *store) releaseWrite(n int64) {
	st.mu.Lock()
	st.writing -= n
	st.mu.Unlock()
}

// makeRoomLocked picks the uploads to evict, least recently used first and never one in use, so
// that need more bytes fit under maxStore. It forgets them and returns them; the caller removes their
// files and closes them outside the lock.
func (st *store) makeRoomLocked(need int64) ([]*StoredImage, error) {
	if st.maxStore <= 0 || st.onDisk+need <= st.maxStore {
		return nil, nil
	}
	if need > st.maxStore {
		return nil, storeFull(need, st.maxStore, 0)
	}
	var cands []*StoredImage
	var inUse int64
	for _, si := range st.images {
		if !si.Upload {
			continue
		}
		if si.refs > 0 {
			inUse += si.onDisk
			continue
		}
		cands = append(cands, si)
	}
	sort.Slice(cands, func(i, j int) bool {
		if !cands[i].lastUsed.Equal(cands[j].lastUsed) {
			return cands[i].lastUsed.Before(cands[j].lastUsed)
		}
		return cands[i].ID < cands[j].ID
	})
	over := st.onDisk + need - st.maxStore
	var victims []*StoredImage
	for _, si := range cands {
		if over <= 0 {
			break
		}
		victims = append(victims, si)
		over -= si.onDisk
	}
	if over > 0 {
		return nil, storeFull(need, st.maxStore, inUse)
	}
	for _, si := range victims {
		st.forgetLocked(si)
		si.closed = true
	}
	return victims, nil
}

// removeAll empties the store for Close and refuses later additions.
func (st *store) removeAll() []*StoredImage {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]*StoredImage, 0, len(st.images))
	for _, si := range st.images {
		out = append(out, si)
		si.gone = true
		si.closed = true
	}
	st.images = map[string]*StoredImage{}
	st.onDisk = 0
	st.closed = true
	return out
}

// close closes the image and, for an upload, its file.
func (si *StoredImage) close() error {
	err := si.Image.Close()
	if si.file != nil {
		err = errors.Join(err, si.file.Close())
	}
	return err
}

// DemoID is the id of the embedded demo image.
const DemoID = "demo"

// image returns the stored image id, or an ENOTFOUND *Error.
func (s *Server) image(id string) (*StoredImage, error) {
	si, ok := s.store.get(id)
	if !ok {
		return nil, notFound("image", id)
	}
	return si, nil
}

// acquire looks up the image id and marks it in use (see [StoredImage.Acquire]) in one step.
func (s *Server) acquire(id string) (*StoredImage, func(), error) {
	for {
		si, err := s.image(id)
		if err != nil {
			return nil, nil, err
		}
		release, err := si.Acquire()
		if err == nil {
			return si, release, nil
		}
		// Removed between the lookup and Acquire; an upload of the same bytes may have replaced it.
		if _, ok := s.store.get(id); !ok {
			return nil, nil, err
		}
	}
}

// images returns every stored image, the demo first.
func (s *Server) images() []*StoredImage { return s.store.list() }

// uploadsDir is where the stored uploads live.
func (s *Server) uploadsDir() string { return filepath.Join(s.dataDir, uploadsSubdir) }

// TempDir is the directory in the data dir for the server's temporary files: pass it as
// imgio.Options.TempDir when opening the demo and command-line images, so that a killed server
// leaves them in the data dir (removed at the next start) rather than in /tmp.
func (s *Server) TempDir() string { return filepath.Join(s.dataDir, tmpSubdir) }

// prepareDataDir creates the data dir's subdirectories, removes what a killed server left (partial
// uploads, entries half deleted, imgio temporary files) and loads the stored uploads. A damaged entry
// is skipped with one log line; nothing that does not carry one of zrviz's names is touched.
func (s *Server) prepareDataDir() error {
	for _, d := range []string{s.uploadsDir(), s.TempDir()} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("web: data dir: %w", err)
		}
	}
	s.removeTempFiles()
	entries, err := os.ReadDir(s.uploadsDir())
	if err != nil {
		return fmt.Errorf("web: data dir: %w", err)
	}
	loaded := 0
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(s.uploadsDir(), name)
		switch {
		case !e.IsDir():
			// Not ours (a file, a FIFO, a socket, a symbolic link, which is not followed).
			s.log.Warn("skipping a data dir entry that is not a directory", "entry", p, "type", e.Type().String())
		case strings.HasPrefix(name, partialPrefix), strings.HasPrefix(name, removingPrefix):
			if err := removeEntryDir(p); err != nil {
				s.log.Warn("could not remove an unfinished upload", "entry", p, "err", err)
			} else {
				s.log.Info("removed an unfinished upload", "entry", p)
			}
		case idRE.MatchString(name):
			si, err := openEntry(p)
			if err != nil {
				s.log.Warn("skipping a damaged stored image", "entry", p, "err", err)
				continue
			}
			if _, _, err := s.store.add(si); err != nil {
				si.close()
				return err
			}
			loaded++
		}
	}
	if loaded > 0 {
		s.log.Info("stored uploads loaded", "images", loaded, "bytes", s.store.onDisk, "dir", s.uploadsDir())
	}
	// Over a --max-store lowered since the last run: evict now (nothing is in use yet).
	s.store.mu.Lock()
	victims, _ := s.store.makeRoomLocked(0)
	s.store.mu.Unlock()
	s.discard(victims, true, "evicted (over --max-store)")
	return nil
}

// removeTempFiles removes imgio's temporary files from TempDir: at start they are a killed server's
// leftovers (one server uses a data dir at a time).
func (s *Server) removeTempFiles() {
	es, err := os.ReadDir(s.TempDir())
	if err != nil {
		return
	}
	for _, e := range es {
		if n := e.Name(); e.Type().IsRegular() && strings.HasPrefix(n, "zrviz-") && strings.HasSuffix(n, ".img") {
			p := filepath.Join(s.TempDir(), n)
			if err := os.Remove(p); err == nil {
				s.log.Info("removed a temporary file left by an earlier run", "file", p)
			}
		}
	}
}

// removePartials removes the .partial- and .removing- directories (Close, after the upload handlers
// have ended).
func (s *Server) removePartials() {
	es, err := os.ReadDir(s.uploadsDir())
	if err != nil {
		return
	}
	for _, e := range es {
		n := e.Name()
		if e.IsDir() && (strings.HasPrefix(n, partialPrefix) || strings.HasPrefix(n, removingPrefix)) {
			p := filepath.Join(s.uploadsDir(), n)
			if err := removeEntryDir(p); err != nil {
				s.log.Warn("could not remove an unfinished upload", "entry", p, "err", err)
			}
		}
	}
}

// removeEntryDir removes an entry directory and the two files zrviz puts in it. Anything else in it
// makes the final rmdir fail and is left alone.
func removeEntryDir(dir string) error {
	var errs []error
	for _, n := range []string{entryMeta, entryImage} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// openEntry opens a stored upload: its meta.json must be whole and agree with its directory's name
// and its image file, and imgio must open the image.
func openEntry(dir string) (*StoredImage, error) {
	m, err := readMeta(filepath.Join(dir, entryMeta))
	if err != nil {
		return nil, err
	}
	if m.ID != filepath.Base(dir) {
		return nil, fmt.Errorf("%s: id %q does not match the directory", entryMeta, m.ID)
	}
	f, st, err := openRegular(filepath.Join(dir, entryImage))
	if err != nil {
		return nil, err
	}
	if st.Size() != m.Size {
		f.Close()
		return nil, fmt.Errorf("%s: %d bytes, %s says %d", entryImage, st.Size(), entryMeta, m.Size)
	}
	img, err := imgio.NewImage(f, m.Size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", entryImage, err)
	}
	mt := st.ModTime()
	return &StoredImage{ID: m.ID, Name: m.Name, Size: m.Size, Format: m.Format, Added: m.Added, Image: img,
		Upload: true, file: f, dir: dir, onDisk: allocated(st) + metaOnDisk(dir),
		lastUsed: mt, touched: mt}, nil
}

// openRegular opens a file of a stored entry: never through a symbolic link, never blocking (a FIFO
// named meta.json would hang start-up), and only a regular file.
func openRegular(name string) (*os.File, fs.FileInfo, error) {
	f, err := openNoFollow(name)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file (%s)", filepath.Base(name), st.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// readMeta reads and checks an entry's meta.json.
func readMeta(name string) (*storedMeta, error) {
	f, _, err := openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMetaSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxMetaSize {
		return nil, fmt.Errorf("%s: over %d bytes", entryMeta, maxMetaSize)
	}
	var m storedMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", entryMeta, err)
	}
	switch {
	case m.Version != metaVersion:
		return nil, fmt.Errorf("%s: version %d, want %d", entryMeta, m.Version, metaVersion)
	case !idRE.MatchString(m.ID):
		return nil, fmt.Errorf("%s: bad id %q", entryMeta, m.ID)
	case m.Size <= 0:
		return nil, fmt.Errorf("%s: bad size %d", entryMeta, m.Size)
	case m.Format == "" || len(m.Format) > 32:
		return nil, fmt.Errorf("%s: bad format %q", entryMeta, m.Format)
	case m.Added.IsZero():
		return nil, fmt.Errorf("%s: no upload time", entryMeta)
	}
	m.Name = safeName(m.Name)
	return &m, nil
}

// allocated is the disk space a file takes (its allocated blocks; holes cost nothing).
func allocated(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512 // int32 on js/wasm
	}
	return fi.Size()
}

func metaOnDisk(dir string) int64 {
	fi, err := os.Stat(filepath.Join(dir, entryMeta))
	if err != nil {
		return 0
	}
	return allocated(fi)
}

// discard removes forgotten uploads (evicted or deleted) from the data dir, and closes them when
// closeThem (they were unused when forgotten; an image still in use is closed by its last release).
func (s *Server) discard(victims []*StoredImage, closeThem bool, why string) {
	for _, si := range victims {
		if err := s.removeEntry(si); err != nil {
			s.log.Error("removing a stored image", "id", si.ID, "err", err)
		} else {
			s.log.Info("stored image removed", "id", si.ID, "name", si.Name, "why", why, "bytes", si.onDisk)
		}
		if closeThem {
			if err := si.close(); err != nil {
				s.log.Error("closing a removed image", "id", si.ID, "err", err)
			}
		}
	}
}

// removeEntry takes an upload's entry out of the data dir: renamed to .removing- first (it is gone
// from the next start's listing in one step), then its files and directory removed. An image still
// open keeps reading its unlinked file.
func (s *Server) removeEntry(si *StoredImage) error {
	if si.dir == "" {
		return nil
	}
	// A fresh name: os.Rename refuses to replace a directory, even an empty one.
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(s.uploadsDir(), removingPrefix+si.ID+"-"+hex.EncodeToString(rnd[:]))
	if err := os.Rename(si.dir, tmp); err != nil {
		return err
	}
	syncDir(s.uploadsDir())
	return removeEntryDir(tmp)
}

// syncDir fsyncs a directory so that renames and creations in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

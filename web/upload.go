package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/zrviz/zrviz/imgio"
)

// Upload phases, as GET /api/uploads/{token} reports them.
const (
	phaseReceiving = "receiving"
	phaseExpanding = "expanding"
	phaseOpening   = "opening"
	phaseDone      = "done"
	phaseError     = "error"
)

// uploadKeep is how long a finished upload's progress stays queryable.
const uploadKeep = 10 * time.Minute

// maxUploadsTracked bounds the progress table; the oldest finished entries
// go first.
const maxUploadsTracked = 1024

// tokenRE is what a client-chosen progress token may look like.
var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// uploadProgress is one upload's progress. The counters are written by the
// upload handler and read by the progress handler concurrently.
type uploadProgress struct {
	read    atomic.Int64 // upload bytes received
	written atomic.Int64 // expanded bytes written
	total   atomic.Int64 // expected upload bytes (Content-Length) or -1
	phase   atomic.Value // string

	mu       sync.Mutex
	err      string
	id       string
	finished time.Time
}

// progressBody is the JSON of GET /api/uploads/{token}.
type progressBody struct {
	Phase   string `json:"phase"`
	Read    int64  `json:"read"`
	Written int64  `json:"written"`
	Total   int64  `json:"total"`
	Error   string `json:"error,omitempty"`
	ID      string `json:"id,omitempty"`
}

func (p *uploadProgress) body() progressBody {
	p.mu.Lock()
	defer p.mu.Unlock()
	ph, _ := p.phase.Load().(string)
	return progressBody{Phase: ph, Read: p.read.Load(), Written: p.written.Load(),
		Total: p.total.Load(), Error: p.err, ID: p.id}
}

func (p *uploadProgress) finish(id string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished = time.Now()
	if err != nil {
		p.err = err.Error()
		p.phase.Store(phaseError)
		return
	}
	p.id = id
	p.phase.Store(phaseDone)
}

// uploads tracks the progress of uploads by client-chosen token.
type uploads struct {
	mu sync.Mutex
	m  map[string]*uploadProgress
}

func newUploads() *uploads { return &uploads{m: map[string]*uploadProgress{}} }

// start registers token (which may be "" for an untracked upload) and
// returns its progress record.
func (u *uploads) start(token string, total int64) *uploadProgress {
	p := &uploadProgress{}
	p.total.Store(total)
	p.phase.Store(phaseReceiving)
	if token == "" {
		return p
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	now := time.Now()
	for k, q := range u.m {
		q.mu.Lock()
		old := !q.finished.IsZero() && now.Sub(q.finished) > uploadKeep
		q.mu.Unlock()
		if old || len(u.m) >= maxUploadsTracked && !q.finished.IsZero() {
			delete(u.m, k)
		}
	}
	u.m[token] = p
	return p
}

func (u *uploads) get(token string) (*uploadProgress, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	p, ok := u.m[token]
	return p, ok
}

// uploadBody is the JSON answer to a successful upload.
type uploadBody struct {
	ID     string       `json:"id"`
	Name   string       `json:"name"`
	Size   int64        `json:"size"`
	Format imgio.Format `json:"format"`
	Added  time.Time    `json:"added"`
}

// handleUpload receives an image (raw body, or multipart field "image"), expands it into the data
// dir and stores it durably under an id derived from the bytes received. The answer is 201 for a new
// image and 200 when the same content was already stored (same id).
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	if token != "" && !tokenRE.MatchString(token) {
		s.Error(w, r, badParam("token", "want 1 to 64 of [A-Za-z0-9_-]"))
		return
	}
	// Refused before reading the body: say so and drop the connection, so a client that keeps
	// sending does not keep it (and its descriptor).
	releaseSlot, err := s.slots.take(clientIP(r))
	if err != nil {
		w.Header().Set("Connection", "close")
		s.Error(w, r, err)
		return
	}
	defer releaseSlot()
	body, done := s.beginUpload(w, r)
	if body == nil {
		w.Header().Set("Connection", "close")
		s.Error(w, r, errClosed)
		return
	}
	defer done()
	prog := s.uploads.start(token, r.ContentLength)
	si, created, err := s.receive(r, body, prog)
	prog.finish(idOf(si), err)
	if err != nil {
		if !body.eof {
			w.Header().Set("Connection", "close")
		}
		s.Error(w, r, err)
		return
	}
	code := http.StatusCreated
	if !created {
		code = http.StatusOK
	}
	s.log.Info("image uploaded", "id", si.ID, "name", si.Name, "format", si.Format, "size", si.Size, "new", created)
	writeJSON(w, code, uploadBody{ID: si.ID, Name: si.Name, Size: si.Size, Format: si.Format, Added: si.Added})
}

func idOf(si *StoredImage) string {
	if si == nil {
		return ""
	}
	return si.ID
}

// multipartSlack allows for multipart headers and boundaries on top of the
// image bytes when the request's Content-Length is checked up front.
const multipartSlack = 1 << 20

// receive streams the upload through imgio.ExpandContext into a new .partial- entry of the data dir, opens
// it and commits it. It returns the stored image and whether it is new.
func (s *Server) receive(r *http.Request, body *bodyReader, prog *uploadProgress) (*StoredImage, bool, error) {
	limit := s.cfg.MaxUpload
	src, name, err := uploadStream(r, body, limit)
	if err != nil {
		return nil, false, err
	}
	part, err := s.newPartial()
	if err != nil {
		s.log.Error("storing an upload", "err", err)
		return nil, false, storageErr(err)
	}
	defer part.discard(s)
	lr := &limitedHashReader{r: src, limit: limit, h: sha256.New(), prog: prog}
	opt := &imgio.Options{
		MaxExpanded: s.cfg.MaxExpanded,
		Progress: func(p imgio.Progress) {
			prog.written.Store(p.Written)
			if p.Format != "" && p.Format != imgio.FormatRaw && !lr.eof.Load() {
				prog.phase.Store(phaseExpanding)
			}
		},
	}
	dst := &recordingFile{f: part.file, limit: s.cfg.MaxStore, st: s.store}
	defer dst.release()
	format, size, err := imgio.ExpandContext(body.ctx, dst, lr, opt)
	body.finish()
	switch {
	case lr.over.Load():
		// Our limit, not the image, stopped the expansion.
		return nil, false, tooLarge(limit)
	case body.err != nil:
		// Cut by shutdown or too slow: the reader's own error says which.
		return nil, false, body.err
	case body.wasCut():
		return nil, false, errClosed
	case err != nil && r.Context().Err() != nil:
		return nil, false, badParam("body", "upload interrupted: the client went away")
	case lr.readErr != nil:
		return nil, false, badParam("body", "upload interrupted: "+lr.readErr.Error())
	case dst.over != nil:
		return nil, false, dst.over
	case dst.err != nil:
		s.log.Error("storing an upload", "err", dst.err)
		return nil, false, storageErr(dst.err)
	case errors.Is(err, imgio.ErrEmpty):
		// Said in the words of the page that sent it: imgio's "input" is the user's upload.
		return nil, false, &Error{Code: EINVALID, Message: "the upload is empty (0 bytes)", Err: err}
	case err != nil:
		return nil, false, badImage(err)
	}
	img, err := imgio.NewImage(part.file, size)
	if err != nil {
		return nil, false, badImage(fmt.Errorf("%s: %w", name, err))
	}
	prog.phase.Store(phaseOpening)
	id := hex.EncodeToString(lr.h.Sum(nil))[:12]
	si := &StoredImage{ID: id, Name: name, Size: size, Format: format, Added: time.Now().UTC().Truncate(time.Second),
		Image: img, Upload: true, file: part.file}
	part.img = img
	return s.commit(part, si)
}

// partial is an upload being received: its .partial- directory and image file.
type partial struct {
	dir  string
	file *os.File
	img  *imgio.Image // once opened
	kept bool         // committed: the store owns file and img
}

// newPartial creates a .partial- directory in the uploads dir with an empty image file in it.
func (s *Server) newPartial() (*partial, error) {
	dir, err := os.MkdirTemp(s.uploadsDir(), partialPrefix)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, entryImage), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	return &partial{dir: dir, file: f}, nil
}

// discard closes and removes the partial upload unless it was committed.
func (p *partial) discard(s *Server) {
	if p.kept {
		return
	}
	if p.img != nil {
		p.img.Close()
	}
	p.file.Close()
	if err := removeEntryDir(p.dir); err != nil {
		s.log.Error("removing a failed upload", "entry", p.dir, "err", err)
	}
}

// commit makes the partial upload an entry of the store: the image file and a meta.json are
// fsynced, the directory renamed to the id in one step, the uploads dir fsynced, and least recently
// used uploads evicted to stay under Config.MaxStore. When the id is already stored, the existing
// image is returned instead (and the partial upload discarded by the caller).
func (s *Server) commit(p *partial, si *StoredImage) (*StoredImage, bool, error) {
	if old, ok := s.store.get(si.ID); ok {
		return old, false, nil
	}
	if err := p.file.Sync(); err != nil {
		return nil, false, storageErr(err)
	}
	meta, err := json.Marshal(storedMeta{Version: metaVersion, ID: si.ID, Name: si.Name, Size: si.Size,
		Format: si.Format, Added: si.Added})
	if err != nil {
		return nil, false, err
	}
	if err := writeFileSync(filepath.Join(p.dir, entryMeta), append(meta, '\n')); err != nil {
		return nil, false, storageErr(err)
	}
	if err := syncDir(p.dir); err != nil {
		return nil, false, storageErr(err)
	}
	st, err := p.file.Stat()
	if err != nil {
		return nil, false, storageErr(err)
	}
	si.onDisk = allocated(st) + metaOnDisk(p.dir)
	si.lastUsed, si.touched = st.ModTime(), st.ModTime()

	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if old, ok := s.store.get(si.ID); ok {
		return old, false, nil
	}
	s.store.mu.Lock()
	if s.store.closed {
		s.store.mu.Unlock()
		return nil, false, errClosed
	}
	victims, err := s.store.makeRoomLocked(si.onDisk)
	s.store.mu.Unlock()
	if err != nil {
		return nil, false, err
	}
	final := filepath.Join(s.uploadsDir(), si.ID)
	err = os.Rename(p.dir, final)
	if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
		// An entry of this id that did not open at start (damaged, and skipped with a log line):
		// the same bytes have just arrived whole, so they replace it.
		s.log.Warn("replacing a damaged stored image", "entry", final)
		if rerr := removeEntryDir(final); rerr != nil {
			s.log.Error("removing a damaged stored image", "entry", final, "err", rerr)
		}
		err = os.Rename(p.dir, final)
	}
	if err != nil {
		s.restore(victims)
		return nil, false, storageErr(err)
	}
	p.kept = true
	si.dir = final
	if err := syncDir(s.uploadsDir()); err != nil {
		s.log.Error("syncing the uploads dir", "err", err)
	}
	if _, _, err := s.store.add(si); err != nil {
		// Close began after the check above: the entry is on disk and is listed at the next start.
		si.close()
		s.restore(victims)
		return nil, false, err
	}
	s.discard(victims, true, "evicted (least recently used, over --max-store)")
	return si, true, nil
}

// restore puts back uploads picked for eviction when the upload that needed their room failed.
func (s *Server) restore(victims []*StoredImage) {
	if len(victims) == 0 {
		return
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	for _, si := range victims {
		si.gone, si.closed = false, false
		if !s.store.closed {
			s.store.insertLocked(si)
		} else {
			si.gone, si.closed = true, true
			si.close()
		}
	}
}

// writeFileSync writes a new file and fsyncs it.
func writeFileSync(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// recordingFile is the expansion's destination: it remembers the first write or truncate error,
// which is the server's disk failing (full, quota, I/O) rather than the image being bad. It also
// stops an image whose data alone would not fit in the store (Config.MaxStore): imgio writes no
// all-zero block, so what it writes is what the image takes on disk.
//
// Before it writes, it reserves the bytes from the store (store.reserveWrite, uploadStep at a time),
// so that concurrent uploads together stay under Config.MaxStore while they stream.
type recordingFile struct {
	f        *os.File
	limit    int64 // Config.MaxStore; <= 0 none
	st       *store
	written  int64
	reserved int64 // bytes reserved from st
	err      error
	over     error // a storeFull error, once a write did not fit
}

func (r *recordingFile) WriteAt(p []byte, off int64) (int, error) {
	if r.over != nil {
		return 0, r.over
	}
	if r.limit > 0 && r.written+int64(len(p)) > r.limit {
		r.over = storeFull(r.written+int64(len(p)), r.limit, 0)
		return 0, r.over
	}
	if r.limit > 0 && r.st != nil && r.written+int64(len(p)) > r.reserved {
		need := r.written + int64(len(p)) - r.reserved
		n, err := r.st.reserveWrite(r.written+int64(len(p)), need, max(uploadStep, need))
		if err != nil {
			r.over = err
			return 0, r.over
		}
		r.reserved += n
	}
	r.written += int64(len(p))
	n, err := r.f.WriteAt(p, off)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}

// release gives back the store reservation (the committed image is counted by the store itself).
func (r *recordingFile) release() {
	if r.st != nil && r.reserved > 0 {
		r.st.releaseWrite(r.reserved)
		r.reserved = 0
	}
}

// Truncate lets imgio.ExpandContext set the final size (trailing zero blocks stay a hole).
func (r *recordingFile) Truncate(size int64) error {
	err := r.f.Truncate(size)
	if err != nil && r.err == nil {
		r.err = err
	}
	return err
}

// storageErr is a failure of the server's own disk as the client sees it: the cause (no space left
// on device), never the data dir's path: a full disk or quota is ESTOREFULL (507), anything else
// EINTERNAL (500).
func storageErr(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	if errors.As(err, &pe) {
		err = pe.Err
	} else if errors.As(err, &le) {
		err = le.Err
	}
	code := EINTERNAL // logged
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		code = ESTOREFULL
	}
	return &Error{Code: code, Message: "the server could not store the image: " + err.Error(), Err: err}
}

// uploadStream returns the image bytes of the request: the part named "image" of a multipart
// body, or the body itself, read through body. It refuses a declared length over the limit before
// reading anything.
func uploadStream(r *http.Request, body io.Reader, limit int64) (io.Reader, string, error) {
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if strings.HasPrefix(ct, "multipart/") {
		if r.ContentLength > limit+multipartSlack {
			return nil, "", tooLarge(limit)
		}
		if params["boundary"] == "" {
			return nil, "", badParam("body", "multipart body without boundary")
		}
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil, "", badParam("body", `multipart body has no "image" field`)
			}
			if err != nil {
				return nil, "", badParam("body", "multipart: "+err.Error())
			}
			if p.FormName() != "image" {
				continue
			}
			return p, uploadName(p.FileName(), true, r), nil
		}
	}
	if r.ContentLength > limit {
		return nil, "", tooLarge(limit)
	}
	return body, uploadName("", false, r), nil
}

// uploadName picks an upload's display name: the multipart file name, else the "name" query
// parameter, else "upload.img", reduced by safeName. A multipart file name may be a whole Windows
// path (old browsers sent C:\dir\x.img; RFC 7578 §4.2 says to keep the last part): only there is
// a backslash a separator.
func uploadName(fileName string, multipart bool, r *http.Request) string {
	n := fileName
	if n == "" {
		n = r.URL.Query().Get("name")
	} else if multipart {
		if i := strings.LastIndexByte(n, '\\'); i >= 0 {
			n = n[i+1:]
		}
	}
	return safeName(n)
}

// maxNameBytes bounds a display name (a file name's bound on Linux).
const maxNameBytes = 255

// safeName reduces a client-chosen name to a label that is safe anywhere it is shown or logged:
// letters, digits, marks, spaces and . _ - + ( ) [ ] , @ # = ~ are kept; any other character
// (markup such as < > " ', slashes, control and format characters, invalid UTF-8) becomes one "_"
// per run; leading and trailing dots, spaces and "_" go (no "..", no hidden names); at most
// maxNameBytes bytes, cut in the stem so a short extension survives; "upload.img" when nothing is
// left. "<script>alert(1)</script>.img" becomes "script_alert(1)_script_.img". The name is only a
// label (the id names the file on disk), and templ escapes it again in pages.
func safeName(n string) string {
	var b strings.Builder
	under := false
	for _, c := range strings.ToValidUTF8(n, "\uFFFD") {
		ok := unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.IsMark(c) || c == ' ' ||
			strings.ContainsRune("._-+()[],@#=~", c)
		if !ok {
			if !under {
				b.WriteByte('_')
			}
			under = true
			continue
		}
		under = false
		b.WriteRune(c)
	}
	out := strings.Trim(b.String(), "._ ")
	if len(out) > maxNameBytes {
		ext := path.Ext(out)
		if len(ext) > 16 {
			ext = ""
		}
		stem := out[:len(out)-len(ext)]
		cut := maxNameBytes - len(ext)
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		out = strings.TrimRight(stem[:cut], "._ ") + ext
	}
	if out == "" || strings.Trim(out, ".") == "" {
		return "upload.img"
	}
	return out
}

// limitedHashReader hashes what passes through, counts it into the
// progress record and fails once more than limit bytes arrive. It records
// why it failed so the caller need not guess from imgio's wrapped error.
type limitedHashReader struct {
	r       io.Reader
	limit   int64
	n       int64
	h       hash.Hash
	prog    *uploadProgress
	over    atomic.Bool
	eof     atomic.Bool
	readErr error
}

func (l *limitedHashReader) Read(p []byte) (int, error) {
	if l.over.Load() {
		return 0, tooLarge(l.limit)
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.limit {
		l.over.Store(true)
		return 0, tooLarge(l.limit)
	}
	l.h.Write(p[:n])
	l.prog.read.Store(l.n)
	switch {
	case errors.Is(err, io.EOF):
		l.eof.Store(true)
		l.prog.phase.Store(phaseOpening)
	case err != nil:
		l.readErr = err
		return n, fmt.Errorf("web: reading upload: %w", err)
	}
	return n, err
}

// handleUploadProgress reports an upload's progress by its token.
func (s *Server) handleUploadProgress(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	p, ok := s.uploads.get(token)
	if !ok {
		s.Error(w, r, notFound("upload", token))
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, p.body())
}

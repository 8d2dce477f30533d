package web

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
}

// handleUpload receives an image (raw body, or multipart field "image"),
// expands it through imgio into the data dir and stores it under an id
// derived from the bytes received. The answer is 201 for a new image and
// 200 when the same content was already loaded (same id).
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	if token != "" && !tokenRE.MatchString(token) {
		s.Error(w, r, &ParamError{Name: "token", Msg: "want 1 to 64 of [A-Za-z0-9_-]"})
		return
	}
	prog := s.uploads.start(token, r.ContentLength)
	si, created, err := s.receive(r, prog)
	prog.finish(idOf(si), err)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	code := http.StatusCreated
	if !created {
		code = http.StatusOK
	}
	s.log.Info("image uploaded", "id", si.ID, "name", si.Name, "format", si.Format, "size", si.Size, "new", created)
	writeJSON(w, code, uploadBody{ID: si.ID, Name: si.Name, Size: si.Size, Format: si.Format})
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

// receive streams the upload into imgio.Load. It returns the stored image
// and whether it is new.
func (s *Server) receive(r *http.Request, prog *uploadProgress) (*StoredImage, bool, error) {
	limit := s.cfg.MaxUpload
	body, name, err := s.uploadStream(r, limit)
	if err != nil {
		return nil, false, err
	}
	lr := &limitedHashReader{r: body, limit: limit, h: sha256.New(), prog: prog}
	opt := &imgio.Options{
		TempDir:     s.dataDir,
		MaxExpanded: s.cfg.MaxExpanded,
		Progress: func(p imgio.Progress) {
			prog.written.Store(p.Written)
			if p.Format != "" && p.Format != imgio.FormatRaw && !lr.eof.Load() {
				prog.phase.Store(phaseExpanding)
			}
		},
	}
	img, err := imgio.Load(lr, name, opt)
	if lr.over.Load() {
		// Our limit, not the image, stopped the load; imgio removed its
		// partial file.
		if err == nil {
			img.Close()
		}
		return nil, false, &TooLargeError{Limit: limit}
	}
	if lr.readErr != nil {
		if err == nil {
			img.Close()
		}
		return nil, false, &ParamError{Name: "body", Msg: "upload interrupted: " + lr.readErr.Error()}
	}
	if err != nil {
		if pe := dataDirFailure(err, s.dataDir); pe != nil {
			s.log.Error("storing an upload", "err", err)
			return nil, false, &StorageError{Err: pe.Err}
		}
		return nil, false, &BadImageError{Err: err}
	}
	prog.phase.Store(phaseOpening)
	id := hex.EncodeToString(lr.h.Sum(nil))[:12]
	si := &StoredImage{ID: id, Name: name, Size: img.Size(), Format: img.Format(), Added: time.Now(), Image: img}
	old, loaded, err := s.store.add(si)
	if err != nil || loaded {
		img.Close()
	}
	return old, !loaded, err
}

// uploadStream returns the image bytes of r: the part named "image" of a
// multipart body, or the body itself. It refuses a declared length over the
// limit before reading anything.
func (s *Server) uploadStream(r *http.Request, limit int64) (io.Reader, string, error) {
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if strings.HasPrefix(ct, "multipart/") {
		if r.ContentLength > limit+multipartSlack {
			return nil, "", &TooLargeError{Limit: limit}
		}
		if params["boundary"] == "" {
			return nil, "", &ParamError{Name: "body", Msg: "multipart body without boundary"}
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil, "", &ParamError{Name: "body", Msg: `multipart body has no "image" field`}
			}
			if err != nil {
				return nil, "", &ParamError{Name: "body", Msg: "multipart: " + err.Error()}
			}
			if p.FormName() != "image" {
				continue
			}
			return p, uploadName(p.FileName(), r), nil
		}
	}
	if r.ContentLength > limit {
		return nil, "", &TooLargeError{Limit: limit}
	}
	return r.Body, uploadName("", r), nil
}

// uploadName picks a display name: the multipart file name, else the
// "name" query parameter, else "upload.img". Only the base name is kept.
func uploadName(fileName string, r *http.Request) string {
	n := fileName
	if n == "" {
		n = r.URL.Query().Get("name")
	}
	n = path.Base(strings.ReplaceAll(n, `\`, "/"))
	if n == "" || n == "." || n == "/" {
		n = "upload.img"
	}
	if len(n) > 255 {
		n = n[:255]
	}
	return n
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
		return 0, &TooLargeError{Limit: l.limit}
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.limit {
		l.over.Store(true)
		return 0, &TooLargeError{Limit: l.limit}
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
		s.Error(w, r, &NotFoundError{What: "upload", Name: token})
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, p.body())
}

// dataDirFailure returns the file-system error behind err when it happened on a file in the data dir
// (creating or writing the expanded image), as opposed to something wrong with the image.
func dataDirFailure(err error, dataDir string) *fs.PathError {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return nil
	}
	rel, rerr := filepath.Rel(dataDir, pe.Path)
	if rerr != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	return pe
}

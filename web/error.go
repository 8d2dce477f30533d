package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"syscall"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/exercise"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/units"
)

// Errors the handlers return; Error maps them to status codes.
var (
	// ErrNotFound: an unknown image, path or upload token (404).
	ErrNotFound = errors.New("not found")
	// ErrExists: an image id already in use (409).
	ErrExists = errors.New("already exists")
	// ErrTooLarge: an upload over the limit (413).
	ErrTooLarge = errors.New("too large")
)

// NotFoundError names what was not found. It matches ErrNotFound with errors.Is.
type NotFoundError struct {
	What string // "image", "path", "upload", "segment"
	Name string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.What, e.Name) }

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ParamError is a bad request parameter (400).
type ParamError struct {
	Name string // query parameter or field
	Msg  string
}

func (e *ParamError) Error() string { return fmt.Sprintf("bad %s: %s", e.Name, e.Msg) }

// TooLargeError is an upload over the limit (413). It matches ErrTooLarge.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("upload too large: the limit is %s (%d bytes)", units.Bytes(e.Limit), e.Limit)
}

// Is reports whether target is ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// BadImageError is an upload imgio refused (400); Err says what and where.
type BadImageError struct{ Err error }

func (e *BadImageError) Error() string { return "bad image: " + e.Err.Error() }
func (e *BadImageError) Unwrap() error { return e.Err }

// StorageError is the server failing to store an upload in its data dir (disk full, quota, I/O): the
// server's fault, not the image's. Its message names the cause but not the host path.
type StorageError struct{ Err error }

func (e *StorageError) Error() string {
	return "the server could not store the image: " + e.Err.Error()
}
func (e *StorageError) Unwrap() error { return e.Err }

// errorBody is the JSON of every error response.
type errorBody struct {
	Error string `json:"error"`
}

// Error writes err as a JSON error response with the status its kind
// implies. Internal errors are logged and shown as a generic message, so
// no file-system paths leak to the client.
func (s *Server) Error(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := s.errorStatus(err)
	var be *BusyError
	if errors.As(err, &be) {
		w.Header().Set("Retry-After", strconv.Itoa(int(be.RetryAfter.Seconds())))
	} else if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	if code >= 500 && code != http.StatusServiceUnavailable && code != http.StatusInsufficientStorage {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	} else {
		s.log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
	}
	writeJSON(w, code, errorBody{Error: msg})
}

// errorStatus maps err to an HTTP status and the message users see.
func (s *Server) errorStatus(err error) (int, string) {
	var (
		pe  *ParamError
		bie *BadImageError
		se  *StorageError
		fe  *imgio.FormatError
		ue  *imgio.UnsupportedError
		pfe *fs.PathError
		be  *BusyError
		sue *SlowUploadError
		me  *MisdirectedError
		coe *CrossOriginError
		sfe *StoreFullError
		ce  *ControlError
	)
	switch {
	case errors.Is(err, ErrNotUpgrade):
		return http.StatusUpgradeRequired, err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "the server gave up: this took longer than its time budget allows"
	case errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable, "cancelled: the client left or the server is shutting down"
	case errors.As(err, &ce):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, imgio.ErrNameTooLong):
		// A path over PATH_MAX (4096 bytes) or a name over 255: the kernel says ENAMETOOLONG.
		return http.StatusBadRequest, err.Error() + " (ENAMETOOLONG)"
	case errors.As(err, &me):
		return http.StatusMisdirectedRequest, err.Error()
	case errors.As(err, &coe):
		return http.StatusForbidden, err.Error()
	case errors.As(err, &be):
		return http.StatusServiceUnavailable, err.Error()
	case errors.As(err, &sue):
		return http.StatusRequestTimeout, err.Error()
	case errors.Is(err, ErrNotDeletable):
		return http.StatusConflict, err.Error()
	case errors.As(err, &sfe) && !errors.Is(err, ErrTooLarge):
		return http.StatusInsufficientStorage, err.Error()
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge, err.Error()
	case errors.Is(err, imgio.ErrTooLarge):
		// A small upload that expands past imgio's bound (a zip bomb).
		return http.StatusRequestEntityTooLarge, err.Error()
	case errors.As(err, &pe):
		return http.StatusBadRequest, err.Error()
	case errors.As(err, &se):
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			return http.StatusInsufficientStorage, err.Error()
		}
		return http.StatusInternalServerError, err.Error()
	case errors.As(err, &bie):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound, err.Error()
	case errors.Is(err, fs.ErrNotExist) && errors.As(err, &pfe):
		// imgio's lookups: the path inside the image does not exist (the one place this is mapped).
		return http.StatusNotFound, fmt.Sprintf("path %q not found", pfe.Path)
	case errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound, err.Error()
	case errors.Is(err, fs.ErrInvalid) && errors.As(err, &pfe) && pfe.Op == "readdir":
		// A listing of a file or a symbolic link: the client's mistake, as ENOTDIR is.
		return http.StatusBadRequest, fmt.Sprintf("path %q is not a directory (ENOTDIR)", pfe.Path)
	case errors.Is(err, exercise.ErrNoFile):
		return http.StatusUnprocessableEntity, err.Error()
	case errors.Is(err, imgio.ErrSymlinkLoop) && errors.As(err, &pfe):
		return http.StatusUnprocessableEntity, fmt.Sprintf("path %q: %v (ELOOP)", pfe.Path, imgio.ErrSymlinkLoop)
	case errors.Is(err, errClosed):
		return http.StatusServiceUnavailable, err.Error()
	case errors.Is(err, ErrExists):
		return http.StatusConflict, err.Error()
	case errors.Is(err, imgio.ErrNotF2FS), errors.As(err, &fe), errors.As(err, &ue), errors.Is(err, core.ErrInput), errors.Is(err, core.ErrUnmodelled):
		// A stored image that turns out corrupt where it is read lazily, or
		// that the engine cannot model: the client asked about a bad or
		// unsupported structure, not a server fault.
		return http.StatusUnprocessableEntity, err.Error()
	}
	return http.StatusInternalServerError, "internal error"
}

// writeJSON writes v with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(b)
	w.Write([]byte{'\n'})
}

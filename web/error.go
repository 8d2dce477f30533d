package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/exercise"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/request"
)

// Code is the kind of an [*Error]. It alone decides the HTTP status (codes, at the edge), whether the
// failure is logged, and what the JSON body's "code" says; handlers never pick a status themselves.
type Code string

// The codes, as in benbjohnson/wtf's error.go, one per status the server answers with.
const (
	EINVALID       Code = "invalid"            // 400: a bad parameter, body, image or websocket control
	EFORBIDDEN     Code = "forbidden"          // 403: a state-changing request from another origin
	ENOTFOUND      Code = "not_found"          // 404: an unknown image, path, segment, room, trace, upload or route
	EMETHOD        Code = "method_not_allowed" // 405: with an Allow header naming the methods the path takes
	ETIMEOUT       Code = "timeout"            // 408: an upload body slower than Config.UploadMinRate
	ECONFLICT      Code = "conflict"           // 409: an image id in use; DELETE of an image that is not an upload
	ETOOLARGE      Code = "too_large"          // 413: an upload or trace over its limit; work larger than the whole memory budget
	EMISDIRECTED   Code = "misdirected"        // 421: a Host the server does not answer to
	EUNPROCESSABLE Code = "unprocessable"      // 422: a stored image the engine cannot read or model
	EUPGRADE       Code = "upgrade_required"   // 426: a plain request to a websocket endpoint
	EINTERNAL      Code = "internal"           // 500: the server's fault; logged
	EUNAVAILABLE   Code = "unavailable"        // 503 + Retry-After: a limit the server sets itself, or shutdown
	ESTOREFULL     Code = "store_full"         // 507: the data dir is full, or Config.MaxStore is taken
	ESERVERONLY    Code = "server_only"        // 501: what the static site cannot do (uploads, rooms)
)

// codes maps each Code to its HTTP status.
var codes = map[Code]int{
	EINVALID:       http.StatusBadRequest,
	EFORBIDDEN:     http.StatusForbidden,
	ENOTFOUND:      http.StatusNotFound,
	EMETHOD:        http.StatusMethodNotAllowed,
	ETIMEOUT:       http.StatusRequestTimeout,
	ECONFLICT:      http.StatusConflict,
	ETOOLARGE:      http.StatusRequestEntityTooLarge,
	EMISDIRECTED:   http.StatusMisdirectedRequest,
	EUNPROCESSABLE: http.StatusUnprocessableEntity,
	EUPGRADE:       http.StatusUpgradeRequired,
	EINTERNAL:      http.StatusInternalServerError,
	EUNAVAILABLE:   http.StatusServiceUnavailable,
	ESTOREFULL:     http.StatusInsufficientStorage,
	ESERVERONLY:    http.StatusNotImplemented,
}

// Error is every failure web itself reports: a Code and the Message the user sees. Errors of other
// packages (imgio, core, io/fs, context) are given a Code by [ErrorCode] where they reach the edge.
type Error struct {
	Code    Code
	Message string
	// RetryAfter is how long an EUNAVAILABLE client is told to wait (0: 5 s).
	RetryAfter time.Duration
	// Err is the cause, if any, for errors.Is and errors.As (a bad image's imgio error, a full disk's
	// errno); Message already says what of it the user may see.
	Err error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// Errorf is an *Error of code with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// badParam is a bad request parameter or field name (400).
func badParam(name, msg string) *Error {
	return &Error{Code: EINVALID, Message: fmt.Sprintf("bad %s: %s", name, msg)}
}

// notFound names what was not found (404); what is "image", "path", "upload", "segment", "room", ….
func notFound(what, name string) *Error {
	return Errorf(ENOTFOUND, "%s %q not found", what, name)
}

// controlError is a websocket message the server does not understand, reported to the client as a
// non-fatal error frame (400).
func controlError(msg string) *Error {
	return &Error{Code: EINVALID, Message: "bad control: " + msg}
}

// tooLarge is an upload or a trace over limit bytes (413).
func tooLarge(limit int64) *Error {
	return Errorf(ETOOLARGE, "upload too large: the limit is %s (%d bytes)", units.Bytes(limit), limit)
}

// badImage is an upload imgio refused (400); err says what and where.
func badImage(err error) *Error {
	return &Error{Code: EINVALID, Message: "bad image: " + err.Error(), Err: err}
}

// ErrorCode is the Code err has at the edge: that of the *Error in its chain, or the one its kind of
// foreign error implies; EINTERNAL when nothing says otherwise.
func ErrorCode(err error) Code {
	c, _ := classify(err)
	return c
}

// classify gives err its Code and the message users see: the one place a request's error is
// translated, for the JSON API, the pages and the websocket alike. Context errors come first (a
// cancelled upload is the client leaving, whatever it was doing), then two imgio bounds a web error
// may wrap, then web's own *Error, then the other packages' kinds (request's parse errors among
// them: handlers return them as they are).
func classify(err error) (Code, string) {
	var (
		we  *Error
		pfe *fs.PathError
		fe  *imgio.FormatError
		ue  *imgio.UnsupportedError
		rfe *request.FieldError
		rle *request.LineError
	)
	switch {
	case err == nil:
		return EINTERNAL, "internal error"
	case errors.Is(err, context.DeadlineExceeded):
		return EUNAVAILABLE, "the server gave up: this took longer than its time budget allows"
	case errors.Is(err, context.Canceled):
		return EUNAVAILABLE, "cancelled: the client left or the server is shutting down"
	case errors.Is(err, imgio.ErrNameTooLong):
		// A path over PATH_MAX (4096 bytes) or a name over 255: the kernel says ENAMETOOLONG.
		return EINVALID, err.Error() + " (ENAMETOOLONG)"
	case errors.Is(err, imgio.ErrTooLarge):
		// A small upload that expands past imgio's bound (a zip bomb).
		return ETOOLARGE, err.Error()
	case errors.As(err, &we):
		if we.Code == EINTERNAL {
			return EINTERNAL, we.Message
		}
		return we.Code, err.Error()
	case errors.As(err, &rfe):
		// A run as a person asked for it (request.Parse of a query or a form) names its bad field:
		// the API's 400 says "bad offset: "x": want …", as badParam words it.
		return EINVALID, "bad " + rfe.Field + ": " + strings.TrimPrefix(rfe.Error(), rfe.Field+" ")
	case errors.As(err, &rle):
		// A line of the ops language: the operations before the run.
		return EINVALID, "bad " + FieldBefore + ": " + rle.Error()
	case errors.Is(err, fs.ErrNotExist) && errors.As(err, &pfe):
		// imgio's lookups: the path inside the image does not exist (the one place this is mapped).
		return ENOTFOUND, fmt.Sprintf("path %q not found", pfe.Path)
	case errors.Is(err, fs.ErrNotExist):
		return ENOTFOUND, err.Error()
	case errors.Is(err, fs.ErrInvalid) && errors.As(err, &pfe) && pfe.Op == "readdir":
		// A listing of a file or a symbolic link: the client's mistake, as ENOTDIR is.
		return EINVALID, fmt.Sprintf("path %q is not a directory (ENOTDIR)", pfe.Path)
	case errors.Is(err, imgio.ErrSymlinkLoop) && errors.As(err, &pfe):
		return EUNPROCESSABLE, fmt.Sprintf("path %q: %v (ELOOP)", pfe.Path, imgio.ErrSymlinkLoop)
	case errors.Is(err, exercise.ErrNoFile),
		errors.Is(err, imgio.ErrNotF2FS), errors.As(err, &fe), errors.As(err, &ue), errors.Is(err, core.ErrInput),
		errors.Is(err, core.ErrUnmodelled):
		// A stored image that turns out corrupt where it is read lazily, or that the engine cannot
		// model (core.ErrUnmodelled: e.g. ENOSPC where the kernel would look for a segment the model
		// does not place): the client asked about a bad or unsupported structure, not a server fault.
		return EUNPROCESSABLE, err.Error()
	}
	return EINTERNAL, "internal error"
}

// errorStatus maps err to an HTTP status and the message users see: the edge's one translation, which
// the JSON API (Error), the HTML pages (pageError) and the websocket's error frames (sendError) share.
func (s *Server) errorStatus(err error) (int, string) {
	c, msg := classify(err)
	return codes[c], msg
}

// errorBody is the JSON of every error response.
type errorBody struct {
	Error string `json:"error"`
	Code  Code   `json:"code,omitempty"`
}

// Error writes err as a JSON error response with the status its kind
// implies. Internal errors are logged and shown as a generic message, so
// no file-system paths leak to the client.
func (s *Server) Error(w http.ResponseWriter, r *http.Request, err error) {
	c, msg := classify(err)
	if c == EUNAVAILABLE {
		after := retryAfterDefault
		var we *Error
		if errors.As(err, &we) && we.RetryAfter > 0 {
			after = we.RetryAfter
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(after.Seconds())))
	}
	if c == EINTERNAL {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	} else {
		s.log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "code", c, "err", err)
	}
	writeJSON(w, codes[c], errorBody{Error: msg, Code: c})
}

// retryAfterDefault is the Retry-After of an EUNAVAILABLE error that names none (shutdown, a deadline).
const retryAfterDefault = 5 * time.Second

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

package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/exercise"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
)

// TestErrorCode holds every kind of failure the handlers meet to the code (and so the status) the
// edge gives it: web's own constructors, wrapped or not, and the other packages' kinds.
func TestErrorCode(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error { return fmt.Errorf("web: handler: %w", err) }
	tests := []struct {
		name string
		err  error
		want Code
	}{
		{"param", badParam("offset", "not a number"), EINVALID},
		{"control", controlError("unknown type"), EINVALID},
		{"not presenter", errNotPresenter, EINVALID},
		{"bad image", badImage(imgio.ErrNotF2FS), EINVALID},
		{"not found", notFound("image", "x"), ENOTFOUND},
		{"wrapped not found", wrap(notFound("room", "x")), ENOTFOUND},
		{"cross origin", crossOrigin("origin http://evil"), EFORBIDDEN},
		{"misdirected", misdirected("evil.example"), EMISDIRECTED},
		{"slow upload", slowUpload(1<<10, time.Second), ETIMEOUT},
		{"too large", tooLarge(1 << 20), ETOOLARGE},
		{"store too small", storeFull(200, 100, 0), ETOOLARGE},
		{"store full", storeFull(50, 100, 80), ESTOREFULL},
		{"disk full", storageErr(&fs.PathError{Op: "write", Path: "/data/x", Err: syscall.ENOSPC}), ESTOREFULL},
		{"quota", storageErr(&os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EDQUOT}), ESTOREFULL},
		{"disk I/O", storageErr(syscall.EIO), EINTERNAL},
		{"not upgrade", errNotUpgrade, EUPGRADE},
		{"closed", errClosed, EUNAVAILABLE},
		{"busy", &Error{Code: EUNAVAILABLE, Message: "busy", RetryAfter: time.Minute}, EUNAVAILABLE},
		{"conflict", Errorf(ECONFLICT, "image %q: already exists", "demo"), ECONFLICT},
		{"deadline", wrap(context.DeadlineExceeded), EUNAVAILABLE},
		{"cancelled", context.Canceled, EUNAVAILABLE},
		{"cancelled under a bad image", badImage(context.Canceled), EUNAVAILABLE},
		{"zip bomb", wrap(imgio.ErrTooLarge), ETOOLARGE},
		{"zip bomb in a bad image", badImage(imgio.ErrTooLarge), ETOOLARGE},
		{"name too long", &fs.PathError{Op: "open", Path: "/a", Err: imgio.ErrNameTooLong}, EINVALID},
		{"path missing", &fs.PathError{Op: "open", Path: "/a", Err: fs.ErrNotExist}, ENOTFOUND},
		{"not a directory", &fs.PathError{Op: "readdir", Path: "/a", Err: fs.ErrInvalid}, EINVALID},
		{"symlink loop", &fs.PathError{Op: "open", Path: "/a", Err: imgio.ErrSymlinkLoop}, EUNPROCESSABLE},
		{"not f2fs", wrap(imgio.ErrNotF2FS), EUNPROCESSABLE},
		{"corrupt", &imgio.FormatError{Off: 4096, Msg: "bad magic"}, EUNPROCESSABLE},
		{"unsupported", &imgio.UnsupportedError{}, EUNPROCESSABLE},
		{"engine input", wrap(core.ErrInput), EUNPROCESSABLE},
		{"engine cannot model it", wrap(core.ErrUnmodelled), EUNPROCESSABLE},
		{"exercise without a file", exercise.ErrNoFile, EUNPROCESSABLE},
		{"anything else", errors.New("open /secret/path: permission denied"), EINTERNAL},
		{"nil", nil, EINTERNAL},
		{"method", Errorf(EMETHOD, "method PUT not allowed here"), EMETHOD},
		{"request field", &request.FieldError{Field: "offset", Value: "x", Msg: "want a number"}, EINVALID},
		{"wrapped request field", wrap(&request.FieldError{Field: "mode", Msg: "missing"}), EINVALID},
		{"ops line", &request.LineError{Line: 2, Text: "frob", Err: errors.New("unknown operation")}, EINVALID},
		{"web error over a request field", notFound("path", "/a"), ENOTFOUND},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ErrorCode(tt.err); got != tt.want {
				t.Errorf("ErrorCode(%v) = %s, want %s", tt.err, got, tt.want)
			}
			if _, ok := codes[ErrorCode(tt.err)]; !ok {
				t.Errorf("code %s has no status", ErrorCode(tt.err))
			}
		})
	}
}

// TestErrorEdge checks what Server.Error writes: the status of the code, the code and message in the
// JSON, Retry-After on EUNAVAILABLE (the error's own, else 5 s), and no internal detail.
func TestErrorEdge(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.DiscardHandler)}
	tests := []struct {
		err        error
		status     int
		code       Code
		retryAfter string
		secret     string // must not reach the body
	}{
		{notFound("image", "x"), 404, ENOTFOUND, "", ""},
		{&Error{Code: EUNAVAILABLE, Message: "busy", RetryAfter: time.Minute}, 503, EUNAVAILABLE, "60", ""},
		{errClosed, 503, EUNAVAILABLE, "5", ""},
		{storeFull(50, 100, 80), 507, ESTOREFULL, "", ""},
		{errors.New("open /secret/path: permission denied"), 500, EINTERNAL, "", "/secret/path"},
		{storageErr(&fs.PathError{Op: "write", Path: "/secret/data", Err: syscall.EIO}), 500, EINTERNAL, "", "/secret/data"},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		s.Error(w, httptest.NewRequest(http.MethodGet, "/x", nil), tt.err)
		var body errorBody
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%v: body %q: %v", tt.err, w.Body, err)
		}
		if w.Code != tt.status || body.Code != tt.code || body.Error == "" || w.Header().Get("Retry-After") != tt.retryAfter {
			t.Errorf("%v: %d %+v Retry-After %q; want %d %s Retry-After %q", tt.err, w.Code, body, w.Header().Get("Retry-After"), tt.status, tt.code, tt.retryAfter)
		}
		if tt.secret != "" && json.Valid(w.Body.Bytes()) && strings.Contains(w.Body.String(), tt.secret) {
			t.Errorf("%v: body %q shows %q", tt.err, w.Body, tt.secret)
		}
	}
}

// TestRequestErrorsAtTheEdge: a run's bad field, as request.Parse reports it, reaches the edge as it
// is and is worded there once (classify): the run API and the websocket endpoint answer the same 400
// body, "bad FIELD: …" as badParam words it (the wording paramError gave before it went), and the
// page a 400 page.
func TestRequestErrorsAtTheEdge(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	const number = "want a whole number of bytes: decimal, 0x hex, or with a unit such as 64MiB"
	tests := []struct {
		query string
		want  string
	}{
		{"path=/seed/bench64.bin&offset=x", `bad offset: "x": ` + number},
		{"path=/seed/bench64.bin&length=-1x", `bad length: "-1x": ` + number},
		{"offset=1", "bad path: path: missing"},
		{"path=seed", `bad path: "seed": must be absolute (start with /)`},
		{"path=/seed/bench64.bin&mode=fast", `bad mode: "fast": want per-block, batched or both`},
		{"path=/seed/bench64.bin&keepSize=maybe", `bad keepSize: "maybe": want true or false`},
		{"sandbox=7200-7263&mode=zz", `bad mode: "zz": want per-block, batched or both`},
	}
	for _, tt := range tests {
		var api errorBody
		if code := ts.get(t, "/api/images/demo/run?"+tt.query, &api); code != http.StatusBadRequest || api.Code != EINVALID || api.Error != tt.want {
			t.Errorf("run API ?%s: %d %+v; want 400 %q", tt.query, code, api, tt.want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.ts.URL, "http")+"/ws/run?image=demo&"+tt.query, nil)
		cancel()
		if err == nil {
			c.CloseNow()
			t.Errorf("websocket ?%s: upgraded", tt.query)
			continue
		}
		var ws errorBody
		if res == nil {
			t.Errorf("websocket ?%s: %v, no response", tt.query, err)
		} else if res.StatusCode != http.StatusBadRequest || json.NewDecoder(res.Body).Decode(&ws) != nil || ws != api {
			t.Errorf("websocket ?%s: %d %+v; want the API's 400 %+v", tt.query, res.StatusCode, ws, api)
		}
		if _, code := ts.getPage(t, "/images/demo/run?"+tt.query); code != http.StatusBadRequest && !strings.HasPrefix(tt.query, "sandbox") {
			t.Errorf("page ?%s: %d; want 400", tt.query, code)
		}
	}
}

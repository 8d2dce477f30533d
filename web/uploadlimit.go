package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/zrviz/zrviz/internal/units"
)

// Defaults of the upload limits in Config.
const (
	// DefaultMaxUploads bounds the uploads received at once, from everyone.
	DefaultMaxUploads = 16
	// DefaultMaxUploadsPerClient bounds the uploads received at once from one IP address.
	DefaultMaxUploadsPerClient = 4
	// DefaultUploadMinRate is the slowest an upload may arrive: 32 KiB/s (a 256 kbit/s link)…
	DefaultUploadMinRate int64 = 32 << 10
	// DefaultUploadRateWindow …averaged over this much time spent waiting for the client.
	DefaultUploadRateWindow = 30 * time.Second
	// busyRetryAfter is the Retry-After of a 503 for too many uploads.
	busyRetryAfter = 10 * time.Second
)

// slowUpload is an upload body that arrived slower than Config.UploadMinRate over
// Config.UploadRateWindow (408): the server stopped reading it.
func slowUpload(minRate int64, window time.Duration) *Error {
	return Errorf(ETIMEOUT, "upload too slow: less than %s/s over %s; the server stopped reading", units.Bytes(minRate), window)
}

// uploadSlots counts the uploads in progress, in all and per client address.
type uploadSlots struct {
	mu        sync.Mutex
	max       int
	perClient int
	n         int
	clients   map[string]int
}

func newUploadSlots(max, perClient int) *uploadSlots {
	return &uploadSlots{max: max, perClient: perClient, clients: map[string]int{}}
}

// take reserves a slot for an upload from client, or returns an EUNAVAILABLE *Error (503 with Retry-After: a limit the server sets itself, not a fault).
func (u *uploadSlots) take(client string) (release func(), err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n >= u.max {
		return nil, &Error{Code: EUNAVAILABLE, RetryAfter: busyRetryAfter,
			Message: fmt.Sprintf("server busy: %d uploads are in progress, the most it takes at once; try again later", u.max)}
	}
	if u.clients[client] >= u.perClient {
		return nil, &Error{Code: EUNAVAILABLE, RetryAfter: busyRetryAfter,
			Message: fmt.Sprintf("server busy: %d uploads from your address are in progress, the most one client may send at once; try again later", u.perClient)}
	}
	u.n++
	u.clients[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			u.mu.Lock()
			defer u.mu.Unlock()
			u.n--
			if u.clients[client]--; u.clients[client] <= 0 {
				delete(u.clients, client)
			}
		})
	}, nil
}

// clientIP is the address a request came from (the proxy's, behind a reverse proxy).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// bodyReader reads an upload's body under the minimum rate and lets Close cut it. Both work
// through the connection's read deadline (http.ResponseController): a Read blocked on a stalled or
// departed client returns at the deadline, so neither the handler nor its files outlive it.
//
// The rate is charged on the time spent waiting for the client only, not on the time the server
// spends expanding what it received: within every window of waiting time the client must deliver
// minRate × window bytes.
type bodyReader struct {
	// ctx is the upload's context: it ends with the request (the client left) or when Close cuts
	// the upload, and stops imgio's expansion between two writes even while no read is pending.
	ctx     context.Context
	cancel  context.CancelFunc
	r       io.Reader
	rc      *http.ResponseController
	minRate int64
	window  time.Duration
	now     func() time.Time

	winWait  time.Duration // time spent in Read in this window
	winBytes int64         // bytes received in this window
	eof      bool
	err      error // slowUpload or errClosed, once the reader stopped for one of them

	mu  sync.Mutex // cut against the deadline updates
	cut bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	limited := b.minRate > 0 && b.window > 0
	quota := int64(0)
	if limited {
		quota = int64(float64(b.minRate) * b.window.Seconds())
		if b.winBytes >= quota {
			b.winWait, b.winBytes = 0, 0
		}
	}
	b.mu.Lock()
	if b.cut {
		b.mu.Unlock()
		b.err = errClosed
		return 0, b.err
	}
	start := b.now()
	if limited {
		b.rc.SetReadDeadline(start.Add(b.window - b.winWait))
	}
	b.mu.Unlock()
	n, err := b.r.Read(p)
	b.winWait += b.now().Sub(start)
	b.winBytes += int64(n)
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		b.eof = true
		b.finish()
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.mu.Lock()
		cut := b.cut
		b.mu.Unlock()
		if cut {
			b.err = errClosed
		} else {
			b.err = slowUpload(b.minRate, b.window)
		}
		return n, b.err
	}
	return n, err
}

// finish clears the read deadline once the body has been read (or no more of it will be): the
// connection may serve another request, and net/http's background read must not fail at a deadline
// left over from the upload.
func (b *bodyReader) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.cut {
		b.rc.SetReadDeadline(time.Time{})
	}
}

// stop makes the upload's next or current Read fail with errClosed (Close, after the grace
// period).
func (b *bodyReader) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cut = true
	b.rc.SetReadDeadline(time.Now())
	b.cancel()
}

// wasCut reports whether Close cut the upload.
func (b *bodyReader) wasCut() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cut
}

// beginUpload registers an upload with the server so Close can cut it, and returns its body reader
// and the function that unregisters it; a nil reader means the server is closing.
func (s *Server) beginUpload(w http.ResponseWriter, r *http.Request) (*bodyReader, func()) {
	ctx, cancel := context.WithCancel(r.Context())
	b := &bodyReader{ctx: ctx, cancel: cancel, r: r.Body, rc: http.NewResponseController(w),
		minRate: s.cfg.UploadMinRate, window: s.cfg.UploadRateWindow, now: time.Now}
	s.upMu.Lock()
	defer s.upMu.Unlock()
	if s.closing {
		cancel()
		return nil, nil
	}
	s.inflight[b] = struct{}{}
	s.upWG.Add(1)
	return b, func() {
		cancel()
		b.finish()
		s.upMu.Lock()
		delete(s.inflight, b)
		s.upMu.Unlock()
		s.upWG.Done()
	}
}

// stopUploads cuts every upload in flight and returns how many there were.
func (s *Server) stopUploads() int {
	s.upMu.Lock()
	defer s.upMu.Unlock()
	for b := range s.inflight {
		b.stop()
	}
	return len(s.inflight)
}

package web

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// conn is one websocket client, a player's or a follower's: a reader goroutine that feeds controls,
// a writer goroutine that drains a bounded mailbox, and one lifecycle loop (serve) that selects on
// them for whoever the connection serves (a [connOwner]: a session, a follower). Whoever makes a
// message for the client sends it with send, which never blocks: a full queue kicks the client,
// which the loop then closes with a policy violation, as coder/websocket's chat example does
// (STYLE.md rule 12).
type conn struct {
	ws      Transport
	box     *mailbox
	log     *slog.Logger
	timeout time.Duration // per write

	ctrl      chan []byte // controls read (nil for a binary message)
	readDone  chan error  // capacity 1: the reader's end
	writeDone chan error  // capacity 1: the writer's end
	cancel    context.CancelFunc
	readStop  context.CancelFunc
}

// errSlowClient is a send that found the client's queue full: the client is being closed.
var errSlowClient = errors.New("web: the client reads too slowly; closing it")

// checkWS refuses, before any work is done for it, a websocket request that is not an upgrade (426)
// or that a page of another origin sent (403). websocket.Accept checks the Origin again; this check
// comes first so that a foreign page costs the server nothing (no run resolved, no outline built).
func (s *Server) checkWS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requestTransport(r) != nil {
			next.ServeHTTP(w, r) // the static site's MessagePort (web/transport.go): no upgrade, one origin
			return
		}
		if !isUpgrade(r) {
			w.Header().Set("Upgrade", "websocket")
			s.Error(w, r, errNotUpgrade)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r.Host) {
			w.Header().Set("Connection", "close")
			s.Error(w, r, crossOrigin("origin "+origin))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// connOwner is what a websocket connection serves: a player's session (web/session.go) or a room's
// follower (web/rooms.go). Both live in one lifecycle loop, [conn.serve], so shutdown, a slow client,
// a client gone and too many bad messages end both kinds alike. Its methods are called on the loop's
// goroutine only, one at a time: the owner's own state needs no lock.
type connOwner interface {
	// start runs once the upgrade is accepted, before any control is read: a player queues its
	// hello, a follower joins its room. An error refuses the client after the upgrade: it gets the
	// error as a fatal message and close 1013 (try again later).
	start(c *conn) error
	// control applies one client message (nil for a binary one) and returns why the connection
	// must end, or "".
	control(b []byte) string
	// timer returns the channel of the owner's timed work, or nil for none; asked before every wait.
	timer() <-chan time.Time
	// tick does the timed work timer's channel announced.
	tick(now time.Time)
	// ended yields why the owner's side ends the connection (a room's end), or is nil.
	ended() <-chan string
	// stop runs once the connection is closed, if start succeeded.
	stop()
}

// serveWS is the one connection owner of the server: it counts the connection in the server's runs
// (Close waits for them), upgrades, starts o, runs the lifecycle loop and closes the connection for
// the reason the loop gives. Everything that can be refused with an HTTP status is refused before.
// r.Context() is not used once the connection is hijacked: it lives until the client leaves or
// srvCtx ends.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request, log *slog.Logger, o connOwner) {
	if !s.startRun() {
		s.Error(w, r, errClosed)
		return
	}
	defer s.runs.Done()
	// checkWS refused a foreign Origin before any work; with no OriginPatterns, Accept checks it again.
	c, err := s.accept(s.srvCtx, w, r, log)
	if err != nil {
		log.Debug("websocket refused", "err", err, "origin", r.Header.Get("Origin"))
		return
	}
	if err := o.start(c); err != nil {
		s.sendError(c, err, true)
		c.finish(whyUnavailable)
		return
	}
	c.finish(c.serve(s.srvCtx, o))
	o.stop()
}

// startRun registers a websocket run unless the server is closing.
func (s *Server) startRun() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.runs.Add(1)
	return true
}

// serve is the connection's lifecycle loop: it hands o the client's controls and its timed work
// until something ends the connection, and returns why (for finish).
func (c *conn) serve(srvCtx context.Context, o connOwner) string {
	for {
		var why string
		select {
		case <-srvCtx.Done():
			why = whyShutdown
		case err := <-c.readDone:
			c.readDone <- err // for finish
			why = whyGone
		case err := <-c.writeDone:
			c.writeDone <- err // for finish
			why = whySlow
		case <-c.box.kicked:
			why = whySlow
		case why = <-o.ended():
		case b := <-c.ctrl:
			why = o.control(b)
		case now := <-o.timer():
			o.tick(now)
		}
		if why != "" {
			return endReason(srvCtx, why)
		}
	}
}

// endReason is why a connection ends, given the reason its loop saw first. A shutdown stops the
// writer (its context is the server's) and leaves the queue untaken, so at shutdown a stopped writer
// or a full queue says nothing about the client: the server is going away (1001), never "too slow"
// (1008), whichever of these the loop's select happened to pick first.
func endReason(srvCtx context.Context, why string) string {
	if why == whySlow && srvCtx.Err() != nil {
		return whyShutdown
	}
	return why
}

// accept upgrades the request (its checks are done) and starts the connection's reader and writer.
// ctx is the server's context: r.Context() is not used once the connection is hijacked.
func (s *Server) accept(ctx context.Context, w http.ResponseWriter, r *http.Request, log *slog.Logger) (*conn, error) {
	ws := requestTransport(r)
	if ws == nil {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{})
		if err != nil {
			return nil, err
		}
		ws = c
	}
	ws.SetReadLimit(maxControlSize)
	c := &conn{ws: ws, box: newMailbox(s.budget), log: log, timeout: s.writeTimeout(),
		ctrl: make(chan []byte, 8), readDone: make(chan error, 1), writeDone: make(chan error, 1)}
	// The reader has its own context: cancelling a Read's context closes the connection at once,
	// and on shutdown the close handshake (1001) must happen first.
	var readCtx, writeCtx context.Context
	readCtx, c.readStop = context.WithCancel(context.Background())
	writeCtx, c.cancel = context.WithCancel(ctx)
	go c.readLoop(readCtx)
	go func() { c.writeDone <- c.writeLoop(writeCtx) }()
	return c, nil
}

// send marshals v and queues it; with dropFrame (a hello) an unsent frame of the previous run goes.
// A marshal error is logged and returned; a full queue returns errSlowClient and kicks the client.
func (c *conn) send(v any, dropFrame bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		c.log.Error("websocket message", "err", err)
		return err
	}
	return c.sendBytes(b, dropFrame)
}

// sendBytes queues an encoded message; see send.
func (c *conn) sendBytes(b []byte, dropFrame bool) error {
	if !c.box.putMsg(b, dropFrame) {
		return errSlowClient
	}
	return nil
}

// sendError queues an error message, worded and classed as the HTTP API would answer it.
func (s *Server) sendError(c *conn, err error, fatal bool) {
	code, msg := classify(err)
	if code == EINTERNAL {
		c.log.Error("websocket", "err", err)
	}
	c.send(&errorMsg{V: protocolVersion, Type: "error", Error: msg, Status: codes[code], Fatal: fatal}, false)
}

// Why a connection ended; finish closes it accordingly.
const (
	whyShutdown = "server shutting down"
	whyGone     = "client gone"
	whySlow     = "client too slow"
	whyBad      = "too many bad messages"
	whyEnded    = "the room has ended"
	// whyUnavailable is a follower refused after the upgrade (the room filled up or ended).
	whyUnavailable = "room unavailable"
)

// finish closes the connection for why and waits for its reader and writer: a shutdown with 1001,
// a slow or misbehaving client with 1008 (after the error reply that says why), an ended room with
// 1000 once the client has its last messages. The mailbox's budget goes back whatever the client
// does.
func (c *conn) finish(why string) {
	var err error
	switch why {
	case whyShutdown:
		err = c.ws.Close(websocket.StatusGoingAway, why)
	case whyBad, whyEnded, whyUnavailable:
		// The last messages (the error reply, the room's end) go out before the close frame.
		c.drain()
		code := websocket.StatusPolicyViolation
		switch why {
		case whyEnded:
			code = websocket.StatusNormalClosure
		case whyUnavailable:
			code = websocket.StatusTryAgainLater
		}
		err = c.ws.Close(code, why)
	case whySlow:
		err = c.ws.Close(websocket.StatusPolicyViolation, "connection too slow to keep up with messages")
	default:
		err = c.ws.CloseNow()
	}
	c.log.Debug("websocket closed", "why", why, "err", err)
	c.cancel()
	c.readStop()
	<-c.writeDone
	<-c.readDone
	c.box.close()
}

// drain waits, at most one write timeout, until the writer has sent everything queued.
func (c *conn) drain() {
	t := time.NewTimer(c.timeout)
	defer t.Stop()
	select {
	case <-c.box.drained():
	case <-t.C:
	case err := <-c.writeDone:
		c.writeDone <- err
	}
}

// writeLoop writes what the mailbox holds, each write with its own timeout; it returns when ctx
// ends or a write fails.
func (c *conn) writeLoop(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.box.ready:
		}
		for {
			b := c.box.take()
			if b == nil {
				break
			}
			// Not derived from ctx: cancelling a write's context closes the connection, and shutdown
			// must not cut a message in half before the close handshake.
			wctx, cancel := context.WithTimeout(context.Background(), c.timeout)
			err := c.ws.Write(wctx, websocket.MessageText, b)
			cancel()
			c.box.wrote()
			if err != nil {
				return err
			}
		}
	}
}

// readLoop reads messages into ctrl (nil for a binary one), at most controlRate a second, until ctx
// ends or the connection fails; the error goes to readDone.
func (c *conn) readLoop(ctx context.Context) {
	var lim controlLimiter
	for {
		typ, b, err := c.ws.Read(ctx)
		if err != nil {
			c.readDone <- err
			return
		}
		if typ != websocket.MessageText {
			b = nil // reported as a bad control
		}
		if err := lim.wait(ctx); err != nil {
			c.readDone <- err
			return
		}
		select {
		case c.ctrl <- b:
		case <-ctx.Done():
			c.readDone <- ctx.Err()
			return
		}
	}
}

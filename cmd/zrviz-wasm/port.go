//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"github.com/coder/websocket"
	"github.com/zrviz/zrviz/web"
)

// portIdle is how long a page may say nothing before its connection is taken as gone: a MessagePort
// tells no one when the page at its other end navigates away or crashes, so the page pings every 10 s
// (static/js/portsocket.js) and a session nobody pings stops rather than play on for no one. A hidden
// tab's timers may run once a minute; the page reconnects and resumes when it is shown again.
const portIdle = 90 * time.Second

// portQueue bounds the controls a page may have sent that the session has not read: the websocket's
// reader holds one message at a time; a page that sends faster than the session reads is cut, as a
// server cuts a client that floods it.
const portQueue = 64

// portTransport is the player's connection in the static site: a MessagePort between the page
// (static/js/portsocket.js) and this service worker, carrying the same messages as the websocket.
// Port messages are {kind: "open"} and {kind: "message", data} and {kind: "close", code, reason},
// in both directions where they make sense.
type portTransport struct {
	port js.Value
	in   chan []byte

	mu        sync.Mutex
	closed    bool
	closeErr  error
	done      chan struct{}
	opened    bool
	readLimit int64
	lastSeen  time.Time
	onMessage js.Func
}

func newPortTransport(port js.Value) *portTransport {
	t := &portTransport{port: port, in: make(chan []byte, portQueue), done: make(chan struct{}), readLimit: 32 << 10,
		lastSeen: time.Now()}
	t.onMessage = js.FuncOf(func(_ js.Value, args []js.Value) any {
		m := args[0].Get("data")
		t.mu.Lock()
		t.lastSeen = time.Now()
		t.mu.Unlock()
		switch m.Get("kind").String() {
		case "message":
			s := m.Get("data")
			if s.Type() != js.TypeString {
				t.closeWith(websocket.StatusUnsupportedData, "a control must be text")
				return nil
			}
			b := []byte(s.String())
			select {
			case t.in <- b:
			default:
				t.closeWith(websocket.StatusPolicyViolation, "too many controls queued")
			}
		case "close":
			t.closeWith(websocket.StatusCode(m.Get("code").Int()), "")
		}
		return nil
	})
	port.Set("onmessage", t.onMessage)
	go t.watch()
	return t
}

// watch closes the connection once the page has been silent for portIdle.
func (t *portTransport) watch() {
	tick := time.NewTicker(portIdle / 6)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return
		case now := <-tick.C:
			t.mu.Lock()
			idle := now.Sub(t.lastSeen)
			t.mu.Unlock()
			if idle > portIdle {
				t.closeWith(websocket.StatusGoingAway, "the page stopped answering")
				return
			}
		}
	}
}

// Read returns the page's next message. The first Read tells the page the connection is open (the
// handler accepted it, as a websocket's upgrade would).
func (t *portTransport) Read(ctx context.Context) (websocket.MessageType, []byte, error) {
	t.mu.Lock()
	if !t.opened && !t.closed {
		t.opened = true
		t.post(map[string]any{"kind": "open"})
	}
	t.mu.Unlock()
	select {
	case b := <-t.in:
		if int64(len(b)) > t.readLimit {
			t.closeWith(websocket.StatusMessageTooBig, "message too big")
			return 0, nil, fmt.Errorf("read limited at %d bytes", t.readLimit)
		}
		return websocket.MessageText, b, nil
	case <-t.done:
		return 0, nil, t.err()
	case <-ctx.Done():
		t.closeWith(websocket.StatusPolicyViolation, "read cancelled")
		return 0, nil, ctx.Err()
	}
}

// Write posts a message to the page; the port never blocks (it queues in the browser).
func (t *portTransport) Write(_ context.Context, typ websocket.MessageType, b []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.closeErr
	}
	if typ != websocket.MessageText {
		return errors.New("zrviz-wasm: the port carries text messages only")
	}
	t.post(map[string]any{"kind": "message", "data": string(b)})
	return nil
}

func (t *portTransport) SetReadLimit(n int64) {
	t.mu.Lock()
	t.readLimit = n
	t.mu.Unlock()
}

func (t *portTransport) Close(code websocket.StatusCode, reason string) error {
	t.closeWith(code, reason)
	return nil
}

func (t *portTransport) CloseNow() error {
	t.closeWith(websocket.StatusAbnormalClosure, "")
	return nil
}

// closeWith ends the connection once: the page gets {kind: "close"} and the port is closed.
func (t *portTransport) closeWith(code websocket.StatusCode, reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	t.closeErr = websocket.CloseError{Code: code, Reason: reason}
	t.post(map[string]any{"kind": "close", "code": int(code), "reason": reason})
	t.port.Call("close")
	t.port.Set("onmessage", js.Null())
	t.onMessage.Release()
	close(t.done)
}

func (t *portTransport) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closeErr
}

// post sends m on the port; callers hold t.mu.
func (t *portTransport) post(m map[string]any) {
	t.port.Call("postMessage", js.ValueOf(m))
}

// connect serves the player's connection to path ("/ws/run?…") on port with the server's own
// handler, as /ws/run serves a websocket. A run the handler refuses before accepting it (a bad
// parameter, an unknown image) closes the port with 1008 and the handler's error message, which a
// websocket could not carry.
func connect(h http.Handler, path string, port js.Value) {
	t := newPortTransport(port)
	go func() {
		r, err := newRequest(web.WithTransport(context.Background(), t), "GET", path, nil)
		if err != nil {
			t.closeWith(websocket.StatusPolicyViolation, err.Error())
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		// Served: the session closed the port. Refused: the recorder holds the error.
		t.closeWith(websocket.StatusPolicyViolation, refusal(rec))
	}()
}

// refusal is the message of the error answer rec holds ({"error": …} or text).
func refusal(rec *httptest.ResponseRecorder) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(rec.Body.Bytes(), &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(rec.Body.String())
}

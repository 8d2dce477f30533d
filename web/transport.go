package web

import (
	"context"
	"net/http"

	"github.com/coder/websocket"
)

// Transport is a client's message stream: the websocket a browser opens to /ws/run or /ws/follow, or,
// in the static site (cmd/zrviz-wasm), a MessagePort between the page and the service worker that
// runs this server as WebAssembly. *websocket.Conn is one. The player's protocol (docs/protocol.md)
// is the same on both; only the carrier differs.
type Transport interface {
	Read(ctx context.Context) (websocket.MessageType, []byte, error)
	Write(ctx context.Context, typ websocket.MessageType, b []byte) error
	SetReadLimit(n int64)
	Close(code websocket.StatusCode, reason string) error
	CloseNow() error
}

type transportKey struct{}

// WithTransport returns a request context carrying t: a request for /ws/run or /ws/follow whose
// context carries one is served on t instead of being upgraded to a websocket. The same handlers
// (the query's checks, the image held, the session) serve both.
func WithTransport(ctx context.Context, t Transport) context.Context {
	return context.WithValue(ctx, transportKey{}, t)
}

// requestTransport is the Transport r's context carries, or nil.
func requestTransport(r *http.Request) Transport {
	t, _ := r.Context().Value(transportKey{}).(Transport)
	return t
}

// serverOnlyPage is serverOnly for a page: the error page, in words (a room's follow link opened on
// the static site).
func (s *Server) serverOnlyPage(what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.pageError(w, r, Errorf(ESERVERONLY, "%s need the zrviz server: run zrviz serve and open this link there. "+
			"This is the static site, which runs in your browser alone and cannot reach another's", what))
	}
}

// serverOnly answers what the static site cannot do, naming it: it needs `zrviz serve`.
func (s *Server) serverOnly(what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.Error(w, r, Errorf(ESERVERONLY, "%s need the zrviz server (zrviz serve): this is the static site, "+
			"which runs in your browser and keeps nothing", what))
	}
}

// Package web serves zrviz over HTTP: the pages, the JSON API, image uploads
// and the websocket stream that drives the player.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/static"
)

// DefaultAddr is where the server listens when Config.Addr is empty:
// loopback only, because uploads are accepted from anyone who can connect.
const DefaultAddr = "127.0.0.1:8080"

// DefaultMaxUpload bounds an upload's size (the bytes received, before any
// expansion) when Config.MaxUpload is 0.
const DefaultMaxUpload int64 = 8 << 30

// Config configures a [Server].
type Config struct {
	Addr      string // listen address; "" = DefaultAddr; ":0" picks a free port
	MaxUpload int64  // bytes; 0 = DefaultMaxUpload
	DataDir   string // uploads and expanded images; "" = a new temp dir, removed by Close
	// MaxExpanded bounds an upload's size after decompression or sparse expansion, so a small
	// compressed bomb cannot fill the data dir; 0 = imgio.DefaultMaxExpanded.
	MaxExpanded int64
	Logger      *slog.Logger // nil = discard
}

// Server is the zrviz HTTP server. Create it with [NewServer], add images
// with [Server.AddImage], then either [Server.Open] it or mount
// [Server.Handler] in a test server.
type Server struct {
	cfg     Config
	log     *slog.Logger
	assets  *static.Assets
	dataDir string
	ownDir  bool // dataDir was created by NewServer and is removed by Close

	store    *store
	uploads  *uploads
	outlines *outlineCache

	// srvCtx is cancelled on shutdown. Websocket handlers derive their
	// contexts from it rather than from r.Context(), because a hijacked
	// connection outlives the request and http.Server.Shutdown does not
	// touch it.
	srvCtx    context.Context
	srvCancel context.CancelFunc
	runs      sync.WaitGroup // websocket run goroutines

	// wsWriteTimeout overrides wsWriteTimeout (tests shorten it).
	wsWriteTimeout time.Duration

	mu       sync.Mutex
	httpSrv  *http.Server
	ln       net.Listener
	serveErr chan error
	closed   bool
}

// NewServer returns a server with no images yet.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	assets, err := static.New()
	if err != nil {
		return nil, fmt.Errorf("web: static assets: %w", err)
	}
	s := &Server{cfg: cfg, log: log, assets: assets}
	if cfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "zrviz-data-")
		if err != nil {
			return nil, fmt.Errorf("web: data dir: %w", err)
		}
		s.dataDir, s.ownDir = dir, true
	} else {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("web: data dir: %w", err)
		}
		s.dataDir = cfg.DataDir
	}
	s.store = newStore()
	s.uploads = newUploads()
	s.outlines = newOutlineCache()
	s.srvCtx, s.srvCancel = context.WithCancel(context.Background())
	return s, nil
}

// AddImage makes img available under id. The server owns img from then on
// and closes it in Close. Adding an id twice is an error.
func (s *Server) AddImage(id, name string, img *imgio.Image) (*StoredImage, error) {
	if img == nil {
		return nil, errors.New("web: AddImage: nil image")
	}
	si := &StoredImage{
		ID:     id,
		Name:   name,
		Size:   img.Size(),
		Format: img.Format(),
		Added:  time.Now(),
		Image:  img,
	}
	_, loaded, err := s.store.add(si)
	if err != nil {
		return nil, fmt.Errorf("web: image %q: %w", id, err)
	}
	if loaded {
		return nil, fmt.Errorf("web: image %q: %w", id, ErrExists)
	}
	return si, nil
}

// Open listens on the configured address and serves in the background
// until Close.
func (s *Server) Open() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("web: server closed")
	}
	if s.ln != nil {
		return errors.New("web: server already open")
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("web: listen: %w", err)
	}
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No ReadTimeout or WriteTimeout: an 8 GiB upload and a websocket
		// legitimately outlive any fixed bound. Page and API handlers have
		// middleware.Timeout; the websocket writer a per-write timeout.
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// Shutdown waits for active requests but ignores hijacked (websocket)
	// connections: cancelling srvCtx is what tells their handlers to close.
	hs.RegisterOnShutdown(s.srvCancel)
	s.httpSrv, s.ln = hs, ln
	s.serveErr = make(chan error, 1)
	// Serve rather than ListenAndServe: the listener exists before Open
	// returns, so URL is right at once and a bad address fails Open.
	go func() { s.serveErr <- hs.Serve(ln) }()
	s.log.Info("listening", "url", s.urlLocked())
	return nil
}

// URL returns the server's base URL ("http://127.0.0.1:PORT") after Open,
// or "" before.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.urlLocked()
}

func (s *Server) urlLocked() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Close shuts the server down: it stops listening, closes every websocket
// (their runs end), waits for requests in flight up to 5 seconds, closes
// every image and removes uploaded data.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	hs := s.httpSrv
	s.mu.Unlock()

	var errs []error
	if hs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := hs.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("web: shutdown: %w", err))
		}
		cancel()
		if err := <-s.serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	// Handlers mounted elsewhere (httptest) get no RegisterOnShutdown call.
	s.srvCancel()
	s.runs.Wait()
	for _, si := range s.store.removeAll() {
		if err := si.Image.Close(); err != nil {
			errs = append(errs, fmt.Errorf("web: close image %s: %w", si.ID, err))
		}
	}
	if s.ownDir {
		if err := os.RemoveAll(s.dataDir); err != nil {
			errs = append(errs, fmt.Errorf("web: remove data dir: %w", err))
		}
	}
	return errors.Join(errs...)
}

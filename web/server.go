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
	"sync/atomic"
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

// DefaultMaxStore bounds the disk space the stored uploads take when Config.MaxStore is 0.
const DefaultMaxStore int64 = 32 << 30

// DefaultShutdownGrace is how long Close lets requests in flight finish when Config.ShutdownGrace
// is 0.
const DefaultShutdownGrace = 5 * time.Second

// Config configures a [Server].
type Config struct {
	Addr      string // listen address; "" = DefaultAddr; ":0" picks a free port
	MaxUpload int64  // bytes; 0 = DefaultMaxUpload
	// DataDir holds the stored uploads, which outlive the server, and its temporary files (see
	// store.go for the layout). "" = a new temporary directory that Close removes with everything
	// in it (tests, and uses that want nothing kept).
	DataDir string
	// MaxExpanded bounds an upload's size after decompression or sparse expansion, so a small
	// compressed bomb cannot fill the data dir; 0 = imgio.DefaultMaxExpanded.
	MaxExpanded int64
	// MaxStore bounds the disk space (allocated bytes) of the stored uploads: past it the least
	// recently used uploads that are not in use are evicted. 0 = DefaultMaxStore; < 0 = no bound.
	MaxStore int64
	// MaxUploads and MaxUploadsPerClient bound the uploads received at once, in all and from one
	// IP address; past either the server answers 503 with Retry-After before reading the body.
	// 0 = DefaultMaxUploads, DefaultMaxUploadsPerClient.
	MaxUploads          int
	MaxUploadsPerClient int
	// UploadMinRate is the slowest an upload body may arrive, in bytes a second over every
	// UploadRateWindow of waiting for it; a slower one is cut with 408. 0 = DefaultUploadMinRate
	// and DefaultUploadRateWindow; < 0 = no minimum.
	UploadMinRate    int64
	UploadRateWindow time.Duration
	// AllowedHosts are Host names ("name" on any port, or "name:port") the server answers to
	// besides localhost, IP addresses and Addr's host name; a request for any other host gets 421
	// (DNS rebinding). Needed behind a reverse proxy or when users browse to the machine's name.
	AllowedHosts []string
	// MaxConns bounds the connections served at once (websockets included); more wait in the
	// kernel's backlog, costing no descriptor. 0 = DefaultMaxConns or half the descriptor limit,
	// whichever is less; < 0 = no bound.
	MaxConns int
	// ShutdownGrace is how long Close lets requests in flight finish before it cuts the uploads
	// still streaming; 0 = DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// MaxMemory is the memory budget of the work the server holds for clients (players, outlines,
	// large answers): past it new work gets 503 with Retry-After. 0 = DefaultMaxMemory; < 0 = none.
	MaxMemory int64
	// RequestTimeout bounds an ordinary page or API request: its context ends then, and its answer
	// must be written by writeGrace later, so a client that reads nothing cannot hold the handler and
	// its reservation longer. Uploads and websockets have their own bounds. 0 = DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Static is the server of the static site (`zrviz site`, cmd/zrviz-wasm): it runs as
	// WebAssembly in the browser's service worker, with no file system and no other client. It has
	// no data dir, takes no uploads (images are opened from the user's machine and held in memory)
	// and has no rooms; the pages say so where a user would look for them.
	Static bool
	Logger *slog.Logger // nil = discard
}

// DefaultMaxMemory is the default memory budget: enough for hundreds of viewers of ordinary runs
// (a viewer of a 64 MiB run holds about 1 MB) and far below what a laptop has.
const DefaultMaxMemory int64 = 2 << 30

// Server is the zrviz HTTP server. Create it with [NewServer], add images
// with [Server.AddImage], then either [Server.Open] it or mount
// [Server.Handler] in a test server.
type Server struct {
	cfg     Config
	log     *slog.Logger
	assets  *static.Assets
	dataDir string
	ownDir  bool     // dataDir was created by NewServer and is removed by Close
	lock    *os.File // the data dir, flocked while the server uses it

	store    *store
	uploads  *uploads
	outlines *outlineCache
	resolved *resolvedCache // engine inputs after a run's earlier operations (web/resolvecache.go)
	next     *nextCache     // what-happens-next timelines of recent runs (web/next.go)
	traces   traceStore     // kernel traces (web/traces.go)
	surveys  surveyJobs     // whole-image surveys (web/survey.go)
	rooms    *roomHub       // classroom rooms (web/rooms.go)
	// roomLingerFor overrides roomLinger, in nanoseconds (tests shorten it, also while rooms run).
	roomLingerFor atomic.Int64
	// playClockScale, when above 1, makes the play clock run that many times faster than the wall
	// clock (math.Float64bits): browser tests that follow a play to its end at a pace (the README's
	// "in 30 s") wait a fraction of it. Speeds, paces and times left are reported unscaled.
	playClockScale atomic.Uint64
	budget         *budget
	heavy          *heavySlots // simulations run at once (web/budget.go)
	hosts          *allowedHosts
	slots          *uploadSlots

	// commitMu serialises the step that makes an upload a stored image (id check, eviction, rename).
	commitMu sync.Mutex

	// The uploads in flight, so Close can cut them after the grace period.
	upMu     sync.Mutex
	closing  bool
	inflight map[*bodyReader]struct{}
	upWG     sync.WaitGroup

	// srvCtx is cancelled on shutdown. Websocket handlers derive their
	// contexts from it rather than from r.Context(), because a hijacked
	// connection outlives the request and http.Server.Shutdown does not
	// touch it.
	srvCtx    context.Context
	srvCancel context.CancelFunc
	runs      sync.WaitGroup // websocket run goroutines

	// requestTimeoutFor overrides requestTimeout's write deadline (tests shorten it).
	requestTimeoutFor time.Duration
	// surveyIdleFor overrides surveyIdle (tests shorten it).
	surveyIdleFor time.Duration
	// wsWriteTimeout overrides wsWriteTimeout (tests shorten it).
	wsWriteTimeout time.Duration

	mu       sync.Mutex
	httpSrv  *http.Server
	ln       net.Listener
	serveErr chan error
	closed   bool
}

// NewServer returns a server holding the uploads stored in the data dir (and no other image yet).
// It takes the data dir for itself until Close: a second server on the same directory is refused.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.MaxStore == 0 {
		cfg.MaxStore = DefaultMaxStore
	}
	if cfg.MaxUploads <= 0 {
		cfg.MaxUploads = DefaultMaxUploads
	}
	if cfg.MaxUploadsPerClient <= 0 {
		cfg.MaxUploadsPerClient = DefaultMaxUploadsPerClient
	}
	if cfg.UploadMinRate == 0 {
		cfg.UploadMinRate = DefaultUploadMinRate
	}
	if cfg.UploadRateWindow <= 0 {
		cfg.UploadRateWindow = DefaultUploadRateWindow
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
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
	switch {
	case cfg.Static:
		// No data dir: nothing is stored, and the browser gives WebAssembly no file system.
	case cfg.DataDir == "":
		dir, err := os.MkdirTemp("", "zrviz-data-")
		if err != nil {
			return nil, fmt.Errorf("web: data dir: %w", err)
		}
		s.dataDir, s.ownDir = dir, true
	default:
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("web: data dir: %w", err)
		}
		s.dataDir = cfg.DataDir
	}
	fail := func(err error) (*Server, error) {
		if s.lock != nil {
			s.lock.Close()
		}
		for _, si := range s.store.removeAll() {
			si.close()
		}
		if s.ownDir {
			os.RemoveAll(s.dataDir)
		}
		return nil, err
	}
	s.store = newStore(cfg.MaxStore)
	s.store.log = func(msg string, args ...any) { log.Warn(msg, args...) }
	if !cfg.Static {
		if s.lock, err = lockDir(s.dataDir); err != nil {
			return fail(err)
		}
		if err := s.prepareDataDir(); err != nil {
			return fail(err)
		}
	}
	s.uploads = newUploads()
	s.rooms = newRoomHub()
	s.budget = &budget{limit: cfg.MaxMemory}
	if cfg.MaxMemory == 0 {
		s.budget.limit = DefaultMaxMemory
	}
	s.outlines = newOutlineCache(s.budget)
	s.resolved = newResolvedCache(s.budget)
	s.next = newNextCache(s.budget)
	s.traces.charge = s.budget
	s.heavy = newHeavySlots()
	s.hosts = newAllowedHosts(cfg.Addr, cfg.AllowedHosts)
	s.slots = newUploadSlots(cfg.MaxUploads, cfg.MaxUploadsPerClient)
	s.inflight = map[*bodyReader]struct{}{}
	s.srvCtx, s.srvCancel = context.WithCancel(context.Background())
	return s, nil
}

// DataDir is the directory holding the stored uploads and the server's temporary files.
func (s *Server) DataDir() string { return s.dataDir }

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
		return nil, Errorf(ECONFLICT, "web: image %q: already exists", id)
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
	ln = newLimitListener(ln, maxConns(s.cfg.MaxConns))
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

// Close shuts the server down: it stops listening, lets requests in flight finish for
// Config.ShutdownGrace, then cuts the uploads still streaming (their clients get 503 and their partial
// files are removed) and closes every websocket (their runs end). It closes every image and releases
// the data dir; the stored uploads stay in it for the next start, unless the data dir was a temporary
// one of NewServer's, which is removed. Running out of the grace period is not an error.
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
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
		err := hs.Shutdown(ctx)
		cancel()
		if err != nil {
			// Requests still running after the grace period: cut the uploads (their reads fail at
			// once, so their handlers answer 503 and remove their files), then drop every other
			// connection.
			n := s.endUploads()
			s.log.Info("grace period over: cut the uploads still streaming", "uploads", n, "grace", s.cfg.ShutdownGrace)
			if err := hs.Close(); err != nil {
				errs = append(errs, fmt.Errorf("web: close: %w", err))
			}
		}
		if err := <-s.serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	// Handlers mounted elsewhere (httptest) get no RegisterOnShutdown call, nor the grace period.
	s.srvCancel()
	s.endUploads()
	s.runs.Wait()
	for _, si := range s.store.removeAll() {
		if si.Upload && si.lastUsed.After(si.touched) {
			si.touch(si.lastUsed)
		}
		if err := si.close(); err != nil {
			errs = append(errs, fmt.Errorf("web: close image %s: %w", si.ID, err))
		}
	}
	if !s.ownDir && !s.cfg.Static {
		s.removePartials()
	}
	if s.lock != nil {
		s.lock.Close()
	}
	if s.ownDir {
		if err := os.RemoveAll(s.dataDir); err != nil {
			errs = append(errs, fmt.Errorf("web: remove data dir: %w", err))
		}
	}
	return errors.Join(errs...)
}

// uploadsEndWait bounds how long Close waits for cut upload handlers to finish (they stop at their
// next read; one busy expanding a large block of input takes a moment).
const uploadsEndWait = 10 * time.Second

// endUploads refuses new uploads, cuts those in flight and waits (up to uploadsEndWait) for their
// handlers to remove their partial files. It returns how many were cut.
func (s *Server) endUploads() int {
	s.upMu.Lock()
	s.closing = true
	s.upMu.Unlock()
	n := s.stopUploads()
	done := make(chan struct{})
	go func() { s.upWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(uploadsEndWait):
		s.log.Warn("uploads still running after being cut", "wait", uploadsEndWait)
	}
	return n
}

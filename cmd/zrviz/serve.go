package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/web"
)

// serveConfig is what the serve command's flags say.
type serveConfig struct {
	addr      string
	maxUpload int64
	// maxExpanded bounds compressed and sparse input after expansion, for uploads and IMG arguments.
	maxExpanded int64
	dataDir     string
	// maxStore bounds the stored uploads on disk; 0 means no bound.
	maxStore int64
	// maxUploads and maxUploadsPerClient bound the uploads received at once.
	maxUploads, maxUploadsPerClient int
	// uploadMinRate is the slowest accepted upload, bytes a second; 0 means no minimum.
	uploadMinRate int64
	// maxMemory is the memory budget of viewers, outlines and large answers; 0 means no bound.
	maxMemory int64
	// requestTimeout bounds a page or API request, its answer included (web.Config.RequestTimeout).
	requestTimeout time.Duration
	allowedHosts   []string
	images         []string
	quiet          bool
}

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (f *stringsFlag) String() string { return strings.Join(*f, ",") }
func (f *stringsFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty value")
	}
	*f = append(*f, s)
	return nil
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "serve [--addr HOST:PORT] [--data-dir DIR] [--max-store SIZE] [--max-upload SIZE] [--max-expanded SIZE] [--max-memory SIZE] [--request-timeout DURATION] [--allowed-host NAME]... [--quiet] [IMG ...]", stderr)
	var cfg serveConfig
	fs.StringVar(&cfg.addr, "addr", web.DefaultAddr, "listen `HOST:PORT`; binding beyond loopback exposes uploads to the network")
	maxUpload := sizeFlag{n: web.DefaultMaxUpload, nonNegative: true}
	fs.Var(&maxUpload, "max-upload", "largest accepted upload `SIZE`, as sent (e.g. 512MiB; default 8GiB)")
	maxExpanded := sizeFlag{n: imgio.DefaultMaxExpanded, nonNegative: true}
	fs.Var(&maxExpanded, "max-expanded", "largest image `SIZE` after decompressing gzip/xz/zstd or expanding Android sparse input (default 64GiB)")
	fs.StringVar(&cfg.dataDir, "data-dir", "", "`DIR` keeping the uploads across restarts, and the server's temporary files (default: the user cache directory's zrviz, e.g. ~/.cache/zrviz)")
	maxStore := sizeFlag{n: web.DefaultMaxStore, nonNegative: true}
	fs.Var(&maxStore, "max-store", "disk `SIZE` the stored uploads may take; past it the least recently used ones not being viewed are deleted (default 32GiB; 0 = no bound)")
	fs.IntVar(&cfg.maxUploads, "max-uploads", web.DefaultMaxUploads, "uploads received at once, from everyone (`N`; more get 503 with Retry-After)")
	fs.IntVar(&cfg.maxUploadsPerClient, "max-uploads-per-client", web.DefaultMaxUploadsPerClient, "uploads received at once from one IP address (`N`)")
	minRate := sizeFlag{n: web.DefaultUploadMinRate, nonNegative: true}
	fs.Var(&minRate, "upload-min-rate", "slowest accepted upload, `SIZE` per second over 30 s of waiting (default 32KiB; 0 = no minimum)")
	maxMemory := sizeFlag{n: defaultMaxMemory(), nonNegative: true}
	fs.Var(&maxMemory, "max-memory", fmt.Sprintf("memory `SIZE` the server may hold for viewers, outlines and large answers; past it new work gets 503 with Retry-After (default %s: a quarter of this machine's memory, at most 2GiB; 0 = no bound)", units.Bytes(maxMemory.n)))
	fs.DurationVar(&cfg.requestTimeout, "request-timeout", web.DefaultRequestTimeout, "how long a page or API request may take, its answer included (`DURATION`, e.g. 30s); a client that reads nothing holds its work and memory no longer. Uploads and websockets have their own bounds")
	fs.Var((*stringsFlag)(&cfg.allowedHosts), "allowed-host", "also answer requests for host `NAME` (or NAME:PORT): a reverse proxy's or the machine's name; repeatable. Other names get 421")
	fs.BoolVar(&cfg.quiet, "quiet", false, "log warnings and errors only")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg.maxUpload, cfg.maxExpanded, cfg.maxStore, cfg.uploadMinRate = maxUpload.n, maxExpanded.n, maxStore.n, minRate.n
	cfg.maxMemory = maxMemory.n
	if cfg.requestTimeout <= 0 {
		return usageError{"--request-timeout must be positive"}
	}
	if cfg.maxUploads < 1 || cfg.maxUploadsPerClient < 1 {
		return usageError{"--max-uploads and --max-uploads-per-client must be at least 1"}
	}
	if cfg.dataDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no user cache directory to keep uploads in (%w); give one with --data-dir", err)
		}
		cfg.dataDir = filepath.Join(dir, "zrviz")
	}
	cfg.images = fs.Args()
	return serve(ctx, cfg, stdout, stderr)
}

// serve runs the server until ctx is done.
func serve(ctx context.Context, cfg serveConfig, stdout, stderr io.Writer) error {
	level := slog.LevelInfo
	if cfg.quiet {
		level = slog.LevelWarn
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if host, _, err := net.SplitHostPort(cfg.addr); err == nil && !isLoopback(host) {
		logger.Warn("listening beyond loopback: anyone who can reach this address can upload images and run simulations", "addr", cfg.addr)
	}
	wc := web.Config{Addr: cfg.addr, MaxUpload: cfg.maxUpload, DataDir: cfg.dataDir, MaxExpanded: cfg.maxExpanded,
		MaxStore: cfg.maxStore, MaxUploads: cfg.maxUploads, MaxUploadsPerClient: cfg.maxUploadsPerClient,
		UploadMinRate: cfg.uploadMinRate, AllowedHosts: cfg.allowedHosts, MaxMemory: cfg.maxMemory, RequestTimeout: cfg.requestTimeout, Logger: logger}
	if wc.MaxStore == 0 {
		wc.MaxStore = -1 // the flag's 0 is "no bound"; web's 0 is its default
	}
	if wc.UploadMinRate == 0 {
		wc.UploadMinRate = -1
	}
	if wc.MaxMemory == 0 {
		wc.MaxMemory = -1
	} else {
		// The budget counts what the work holds live; the garbage collector lets the heap grow to
		// twice that by default. A soft limit a little above the budget makes it collect sooner
		// instead, so the process stays near what --max-memory says. (Only main sets it: it is the
		// process's, not the library's.)
		debug.SetMemoryLimit(wc.MaxMemory + 256<<20)
	}
	srv, err := web.NewServer(wc)
	if err != nil {
		return err
	}
	defer srv.Close()

	// The demo and compressed IMG arguments are expanded into the data dir's tmp/, not /tmp: a killed
	// server leaves them there, and the next start removes them.
	opt := &imgio.Options{TempDir: srv.TempDir(), MaxExpanded: cfg.maxExpanded}
	demo, err := imgio.OpenDemo(opt)
	if err != nil {
		return fmt.Errorf("open the embedded demo image: %w", err)
	}
	if _, err := srv.AddImage("demo", "demo.img", demo); err != nil {
		demo.Close()
		return err
	}
	for _, name := range cfg.images {
		if err := ctx.Err(); err != nil {
			return nil // interrupted while loading: stop quietly, Close cleans up
		}
		if name == demoName {
			continue // served above, as every server does
		}
		img, err := imgio.OpenFileContext(ctx, name, opt)
		if ctx.Err() != nil {
			// Interrupted while expanding: imgio removed the partial file; stop quietly.
			if err == nil {
				img.Close()
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := srv.AddImage(imageID(img), filepath.Base(name), img); err != nil {
			img.Close()
			if web.ErrorCode(err) == web.ECONFLICT {
				// The same image twice (or a copy of it, or of the demo): serve it once.
				logger.Warn("image already loaded; serving it once", "image", name)
				continue
			}
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil
	}
	if err := srv.Open(); err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w\n  %s is taken (another zrviz?): serve on another port with  zrviz serve --addr %s", err, cfg.addr, nextPort(cfg.addr))
		}
		return err
	}
	fmt.Fprintf(stdout, "zrviz is serving %s at %s (Ctrl-C to stop); uploads are kept in %s\n",
		plural(srv.ImageCount(), "image"), servingAt(srv.URL(), cfg.addr), srv.DataDir())
	<-ctx.Done()
	fmt.Fprintf(stdout, "zrviz: shutting down (%s of the memory budget reserved by work in progress and cached outlines)\n",
		units.Bytes(srv.MemoryInUse()))
	return srv.Close()
}

// imageID derives an image's id from what identifies its content cheaply: the superblock UUID, the
// live checkpoint's version and counters, and the size. Hashing every byte of a 16 GiB image at start-up
// would take longer than the user is willing to wait; two images that agree on all of these are copies
// of one another.
func imageID(img *imgio.Image) string {
	v := img.Volume()
	h := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%d|%d|%d|%d", v.UUID, v.CheckpointVersion, v.ValidBlockCount,
		v.ValidNodeCount, v.FreeSegmentCount, img.Size()))
	return hex.EncodeToString(h[:6])
}

// defaultMaxMemory is --max-memory's default: a quarter of the machine's memory (MemTotal in
// /proc/meminfo), at most web.DefaultMaxMemory and at least 256 MiB; web.DefaultMaxMemory where the
// machine's memory is unknown.
func defaultMaxMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return web.DefaultMaxMemory
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb > 0 {
					return min(max(kb<<10/4, 256<<20), web.DefaultMaxMemory)
				}
			}
		}
	}
	return web.DefaultMaxMemory
}

// nextPort is the address the port-taken hint suggests: the same host, the port after the taken one
// (127.0.0.1:8080 → 127.0.0.1:8081, :9000 → :9001).
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "127.0.0.1:8081"
	}
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p >= 65535 {
		return net.JoinHostPort(host, "8081")
	}
	return net.JoinHostPort(host, strconv.Itoa(p+1))
}

// servingAt says where a browser reaches the server. A listener on every address (--addr 0.0.0.0:8080
// or :8080) reports [::]:8080, which no browser opens: name this machine's loopback URL and say it
// is on every address.
func servingAt(url, addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || (host != "" && !net.ParseIP(host).IsUnspecified()) {
		return url + "/"
	}
	_, port, err := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
	if err != nil {
		return url + "/"
	}
	return "http://127.0.0.1:" + port + "/ (and on every address of this machine, port " + port + ")"
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

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
	"path/filepath"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/web"
)

// serveConfig is what the serve command's flags say.
type serveConfig struct {
	addr      string
	maxUpload int64
	// maxExpanded bounds compressed and sparse input after expansion, for uploads and IMG arguments.
	maxExpanded int64
	dataDir     string
	images      []string
	quiet       bool
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "serve [--addr HOST:PORT] [--max-upload SIZE] [--max-expanded SIZE] [--data-dir DIR] [--quiet] [IMG ...]", stderr)
	var cfg serveConfig
	fs.StringVar(&cfg.addr, "addr", web.DefaultAddr, "listen `HOST:PORT`; binding beyond loopback exposes uploads to the network")
	maxUpload := sizeFlag{n: web.DefaultMaxUpload}
	fs.Var(&maxUpload, "max-upload", "largest accepted upload `SIZE`, as sent (e.g. 512MiB; default 8GiB)")
	maxExpanded := sizeFlag{n: imgio.DefaultMaxExpanded}
	fs.Var(&maxExpanded, "max-expanded", "largest image `SIZE` after decompressing gzip/xz/zstd or expanding Android sparse input (default 64GiB)")
	fs.StringVar(&cfg.dataDir, "data-dir", "", "`DIR` for uploads and expanded images (default: a new temporary directory, removed on exit)")
	fs.BoolVar(&cfg.quiet, "quiet", false, "log warnings and errors only")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg.maxUpload, cfg.maxExpanded = maxUpload.n, maxExpanded.n
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
	srv, err := web.NewServer(web.Config{Addr: cfg.addr, MaxUpload: cfg.maxUpload, DataDir: cfg.dataDir,
		MaxExpanded: cfg.maxExpanded, Logger: logger})
	if err != nil {
		return err
	}
	defer srv.Close()

	demo, err := imgio.OpenDemo(nil)
	if err != nil {
		return fmt.Errorf("open the embedded demo image: %w", err)
	}
	if _, err := srv.AddImage("demo", "demo.img", demo); err != nil {
		demo.Close()
		return err
	}
	served := 1
	for _, name := range cfg.images {
		img, err := imgio.OpenFile(name, &imgio.Options{TempDir: cfg.dataDir, MaxExpanded: cfg.maxExpanded})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := srv.AddImage(imageID(img), filepath.Base(name), img); err != nil {
			img.Close()
			if errors.Is(err, web.ErrExists) {
				// The same image twice (or a copy of it, or of the demo): serve it once.
				logger.Warn("image already loaded; serving it once", "image", name)
				continue
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		served++
	}
	if err := srv.Open(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "zrviz is serving %d image(s) at %s/ (Ctrl-C to stop)\n", served, srv.URL())
	<-ctx.Done()
	fmt.Fprintln(stdout, "zrviz: shutting down")
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

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

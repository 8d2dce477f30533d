package web

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// DefaultRequestTimeout bounds ordinary page and API requests (Config.RequestTimeout, the
// --request-timeout flag). Uploads and the
// websocket are outside it: an 8 GiB upload legitimately takes minutes and
// middleware.Timeout would write a 504 into a hijacked connection.
const DefaultRequestTimeout = 60 * time.Second

// writeGrace is how long after requestTimeout an answer may still be written: the 503 or 504 of
// work the deadline cut.
const writeGrace = 5 * time.Second

// Handler returns the server's HTTP handler: every route is listed here.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Use(s.logRequests)
	r.Use(securityHeaders)
	// Only this server's own pages may act (web/guard.go): 421 for a Host it is not, 403 for a
	// state-changing request from another origin.
	r.Use(s.checkHost)
	r.Use(s.checkOrigin)
	// HEAD wherever GET is; a 405 names the allowed methods (web/guard.go).
	var routes routeTable // filled in below, once every route is registered
	r.Use(headAsGet(&routes))
	r.NotFound(s.handleNotFound) // web/notfound.go: HTML for a browser, JSON for the API
	r.MethodNotAllowed(s.methodNotAllowed(&routes))

	// Long-lived: streamed uploads and the player's websocket. The static site has neither uploads
	// nor rooms (Config.Static): those routes say that they need the server.
	upload, follow, followPage, progress := s.handleUpload, s.handleWSFollow, s.handleFollowPage, s.handleUploadProgress
	if s.cfg.Static {
		upload, progress = s.serverOnly("uploads"), s.serverOnly("uploads")
		// The follow page is a page: it says so in words, not in the API's JSON.
		follow, followPage = s.serverOnly("rooms"), s.serverOnlyPage("rooms")
	}
	r.Post("/api/images", upload)
	// The websocket holds its image (?image=) for as long as the connection lives, so --max-store
	// never evicts an image being viewed and a deleted one stays open until the viewer leaves.
	// checkWS refuses a plain request (426) and a foreign Origin (403) before any work is done.
	r.With(s.checkWS, s.holdImageParam).Get("/ws/run", s.handleWSRun)
	r.With(s.checkWS).Get("/ws/follow", follow) // web/rooms.go; the room holds its image

	r.Group(func(r chi.Router) {
		r.Use(s.writeDeadline)
		r.Use(middleware.Timeout(s.requestTimeout()))

		// Pages (web/pages.go). Every route under {id} holds the image while it runs
		// (web/images.go holdImage), so --max-store never evicts it under a reader.
		r.Get("/", s.handleImagesPage)
		r.Route("/images/{id}", func(r chi.Router) {
			if s.cfg.Static {
				// A permalink to an image opened on this machine that the worker no longer holds
				// (a reload, a new browser) asks for the file again (web/local.go).
				r.Use(s.localGate)
			}
			r.Use(s.holdImage)
			r.Get("/", s.handleImagePage)
			r.Get("/file", s.handleFilePage)
			r.Get("/run", s.handleRunPage)
			r.Get("/next", s.handleGCPage)             // web/gc.go: checkpoint and GC, step by step
			r.Get("/blocks", s.handleBlockGoto)        // web/block.go
			r.Get("/blocks/{addr}", s.handleBlockPage) // web/block.go
			r.Get("/survey", s.handleSurveyPage)       // web/survey.go: what batching saves, every file
		})
		r.Get("/follow/{code}", followPage)       // web/rooms.go
		r.Get("/sandbox", s.handleSandboxPage)    // web/sandbox.go
		r.Get("/sandbox/run", s.handleSandboxRun) // web/pages.go: the player on a slot list
		r.Get("/exercise", s.handleExercisePage)  // web/exercise.go
		r.Get("/glossary", s.handleGlossaryPage)  // web/glossary.go
		r.Get("/diff", s.handleDiffPage)          // web/diff.go: two images compared
		r.Get("/favicon.ico", s.handleFavicon)    // web/notfound.go
		// web/compare.go: a zero and a punch of one range side by side; ?image= held as /ws/run holds it.
		r.With(s.holdImageParam).Get("/compare", s.handleComparePage)

		// Embedded ES modules and CSS; versioned URLs are cached for a year.
		r.Handle("/static/*", http.StripPrefix("/static/", s.assets))

		// JSON API (web/api.go, web/upload.go).
		r.Route("/api", func(r chi.Router) {
			r.Get("/images", s.handleListImages)
			r.Route("/images/{id}", func(r chi.Router) {
				r.Use(s.holdImage)
				r.Get("/", s.handleInspect)
				r.Delete("/", s.handleDeleteImage) // web/images.go
				r.Get("/dir", s.handleDir)
				r.Get("/map", s.handleMap)
				r.Get("/dnodes", s.handleDnodes)
				r.Get("/run", s.handleRun)
				r.Get("/segments", s.handleSegments)
				r.Get("/segments/{segno}", s.handleSegment)
				r.Get("/gc", s.handleGC)                 // web/gc.go: checkpoint and GC, "what happens next"
				r.Get("/next", s.handleNext)             // web/next.go: the player's what-happens-next panel
				r.Get("/blocks/{addr}", s.handleBlock)   // web/block.go
				r.Post("/traces", s.handleTraceUpload)   // web/traces.go
				r.Get("/traces/{tid}", s.handleTraceGet) // web/traces.go
				r.Get("/aftercheck", s.handleAfterCheck) // web/aftercheck.go: an after-image against the run's model
				r.Get("/writeback", s.handleWriteback)   // web/writeback.go: dirty pages around the run
				r.Get("/survey", s.handleSurvey)         // web/survey.go: every file's rows (JSON, CSV)
				r.Get("/survey/progress", s.handleSurveyProgress)
			})
			r.Get("/uploads/{token}", progress)
			r.Post("/sandbox", s.handleSandboxAPI)  // web/sandbox.go
			r.Get("/exercise", s.handleExerciseAPI) // web/exercise.go
		})
	})
	routes = newRouteTable(r)
	return r
}

// requestTimeout is Config.RequestTimeout or its default.
func (s *Server) requestTimeout() time.Duration {
	if s.cfg.RequestTimeout > 0 {
		return s.cfg.RequestTimeout
	}
	return DefaultRequestTimeout
}

// writeDeadline gives every answer a write deadline requestTimeout after the request came: a client that reads
// only the status line cannot hold the handler, and what it reserved from the budget, past it
// (middleware.Timeout cancels the context, but a Write blocked on a full socket does not look at
// it).
func (s *Server) writeDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The deadline comes writeGrace after the context's (middleware.Timeout), so that work
		// cut at the context's deadline can still answer with a status instead of an empty reply.
		d := s.requestTimeout() + writeGrace
		if s.requestTimeoutFor > 0 {
			d = s.requestTimeoutFor
		}
		// An error means the writer cannot take deadlines (a test's recorder): nothing to bound.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
		next.ServeHTTP(w, r)
	})
}

// securityHeaders forbids inline script and framing: page data reaches the
// modules through JSON script elements and data-* attributes only.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// logRequests logs each request at debug level with its status and time.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		start := time.Now()
		next.ServeHTTP(ww, r)
		s.log.Debug("http", "method", r.Method, "path", r.URL.Path, "status", ww.Status(),
			"bytes", ww.BytesWritten(), "dur", time.Since(start))
	})
}

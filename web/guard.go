package web

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
)

// The checks in this file keep other web pages out of the server (docs/reliability.md, "Threat
// model"). A page on another site can make the user's browser send requests to 127.0.0.1 and, with
// DNS rebinding, read the answers. Two rules stop it:
//
//   - checkHost answers 421 to a request whose Host is not a name the server listens as: a
//     rebinding page's requests carry its own host name, which is in no list.
//   - checkOrigin refuses (403) a state-changing request (any method but GET, HEAD and OPTIONS)
//     that a browser marks as coming from another origin. Requests with neither Origin nor
//     Sec-Fetch-Site come from programs (curl, scripts, the CLI), not from pages, and pass.
//
// The websockets (/ws/run, /ws/follow) are GETs: checkWS (web/conn.go) checks their Upgrade and
// Origin before any work, and websocket.Accept checks the Origin again.

// allowedHosts is the set of Host names (and name:port) the server answers to.
type allowedHosts struct {
	names map[string]bool // lower-case host names, any port
	exact map[string]bool // lower-case "name:port"
}

// newAllowedHosts builds the set from the listen address and Config.AllowedHosts.
func newAllowedHosts(addr string, extra []string) *allowedHosts {
	a := &allowedHosts{names: map[string]bool{}, exact: map[string]bool{}}
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" && net.ParseIP(h) == nil {
		a.names[strings.ToLower(h)] = true
	}
	for _, e := range extra {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if h, p, err := net.SplitHostPort(e); err == nil && p != "" {
			a.exact[h+":"+p] = true
			continue
		}
		a.names[strings.Trim(e, "[]")] = true
	}
	return a
}

// allows reports whether host (a request's Host header) names this server: the --addr host and the
// --allowed-host names on any port ("name:port" values on that port only), and localhost or any IP
// address on the port the connection came in on (localPort; "" when unknown). An IP address is safe
// to accept: a browser sends one only when the page's own origin is that address, so it cannot be a
// rebinding.
func (a *allowedHosts) allows(host, localPort string) bool {
	host = strings.ToLower(host)
	if host == "" {
		return false
	}
	if a.exact[host] {
		return true
	}
	name, port := host, ""
	if h, p, err := net.SplitHostPort(host); err == nil {
		name, port = h, p
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1]
	}
	if a.names[name] {
		return true
	}
	if net.ParseIP(name) != nil || name == "localhost" {
		return localPort == "" || port == localPort || (port == "" && localPort == "80")
	}
	return false
}

// misdirected is a request whose Host is not a name the server answers to (421).
func misdirected(host string) *Error {
	return Errorf(EMISDIRECTED, "misdirected request: this server does not answer to the host %q (add it with zrviz serve --allowed-host)", host)
}

// crossOrigin is a state-changing request sent by a page of another origin (403); from names it.
func crossOrigin(from string) *Error {
	return Errorf(EFORBIDDEN, "cross-origin request refused: only this server's own pages may change it (request from %s)", from)
}

// checkHost answers 421 to requests whose Host header names another server (DNS rebinding).
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		localPort := ""
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if _, p, err := net.SplitHostPort(la.String()); err == nil {
				localPort = p
			}
		}
		if !s.hosts.allows(r.Host, localPort) {
			w.Header().Set("Connection", "close")
			s.Error(w, r, misdirected(r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses state-changing requests from other origins. A browser sends Origin on every
// POST and DELETE (and Sec-Fetch-Site since 2020-2023, depending on the browser); the request is
// same-origin when Origin's host is the request's Host (already checked by checkHost) or when
// Sec-Fetch-Site says "same-origin".
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		origin := r.Header.Get("Origin")
		site := r.Header.Get("Sec-Fetch-Site")
		ok := true
		from := ""
		switch {
		case origin != "":
			ok = sameOrigin(origin, r.Host)
			from = "origin " + origin
		case site != "":
			ok = site == "same-origin"
			from = "Sec-Fetch-Site " + site
		}
		if !ok {
			w.Header().Set("Connection", "close")
			s.Error(w, r, crossOrigin(from))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether an Origin header names the server the request came to (host is the
// request's Host, which checkHost has checked).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.User == nil &&
		strings.EqualFold(u.Host, host) && u.Path == "" && u.RawQuery == ""
}

// routeTable lists every route's methods by pattern, for the Allow header of a 405. chi knows the
// allowed methods when it answers 405 but hands them only to its own default handler, and
// Routes.Find takes the stubs of r.Route mounts for routes of every method.
type routeTable []routeEntry

type routeEntry struct {
	segs   []string // the pattern's segments: literal, "{param}" or a final "*"
	method string
}

// newRouteTable walks the router once, when the handler is built.
func newRouteTable(r chi.Routes) routeTable {
	var t routeTable
	chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		t = append(t, routeEntry{segs: splitPath(route), method: method})
		return nil
	})
	return t
}

// splitPath splits a path or pattern into segments, ignoring a trailing slash (chi's r.Route serves
// "/x" and "/x/" alike).
func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func (e routeEntry) matches(segs []string) bool {
	for i, s := range e.segs {
		if s == "*" {
			return true
		}
		if i >= len(segs) {
			return false
		}
		if !strings.HasPrefix(s, "{") && s != segs[i] {
			return false
		}
	}
	return len(segs) == len(e.segs)
}

// allowed returns the methods some route takes at path, in a fixed order, with HEAD wherever GET
// is (headAsGet serves it).
func (t routeTable) allowed(path string) []string {
	segs := splitPath(path)
	has := map[string]bool{}
	for _, e := range t {
		if e.matches(segs) {
			has[e.method] = true
		}
	}
	if has[http.MethodGet] {
		has[http.MethodHead] = true
	}
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		if has[m] {
			out = append(out, m)
		}
	}
	return out
}

// has reports whether a route registers method itself at path.
func (t routeTable) has(method, path string) bool {
	segs := splitPath(path)
	for _, e := range t {
		if e.method == method && e.matches(segs) {
			return true
		}
	}
	return false
}

// headAsGet routes HEAD to the GET handler wherever no route takes HEAD itself; net/http drops the
// body of a HEAD answer. (chi's middleware.GetHead asks Routes.Match, which the stubs of r.Route
// mounts answer for every method, so HEAD on /images/{id} would get 405.)
func headAsGet(routes *routeTable) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead && !routes.has(http.MethodHead, r.URL.Path) {
				if rctx := chi.RouteContext(r.Context()); rctx != nil {
					rctx.RouteMethod = http.MethodGet
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// methodNotAllowed answers 405 with an Allow header naming the methods the path does take. routes
// is filled in once the router is complete.
func (s *Server) methodNotAllowed(routes *routeTable) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		allow := routes.allowed(r.URL.Path)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.Error(w, r, Errorf(EMETHOD, "method %s not allowed here (allowed: %s)", r.Method, strings.Join(allow, ", ")))
	}
}

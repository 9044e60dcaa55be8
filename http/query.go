package http

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/podiumhq/podium"
)

// Query parameters are strict, like JSON bodies: every API endpoint lists
// the parameters it reads (see routes), and a request with another one, or
// with one given twice, is 400 invalid_argument naming it. A typo such as
// ?limt=2 would otherwise answer a default page as if it were the one asked
// for. Pages, assets, health and metrics ignore query strings (browsers and
// scrapers add cache busters).

// maxParams bounds the parameters one endpoint may list (a bit each).
const maxParams = 32

// checkQuery checks the raw query string against the parameters an
// endpoint takes. It does not allocate unless a name is escaped.
func checkQuery(raw string, allowed []string) error {
	var seen uint32
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		if part == "" {
			continue
		}
		if strings.IndexByte(part, ';') >= 0 {
			return podium.Errorf(podium.ECodeInvalid, "query parameters are separated by &, not ;")
		}
		name, value, _ := strings.Cut(part, "=")
		if strings.ContainsAny(name, "%+") {
			n, err := url.QueryUnescape(name)
			if err != nil {
				return podium.Errorf(podium.ECodeInvalid, "query parameter %q is not properly escaped", name)
			}
			name = n
		}
		i := indexOf(allowed, name)
		if i < 0 {
			return unknownParam(name, allowed)
		}
		if seen&(1<<i) != 0 {
			return podium.Errorf(podium.ECodeInvalid, "query parameter %s is given more than once", name)
		}
		seen |= 1 << i
		if strings.IndexByte(value, '%') >= 0 {
			if _, err := url.QueryUnescape(value); err != nil {
				return podium.Errorf(podium.ECodeInvalid, "the value of query parameter %s is not properly escaped", name)
			}
		}
	}
	return nil
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func unknownParam(name string, allowed []string) error {
	var hint string
	switch {
	case name == "key":
		// Reading a key from the URL here would put it in proxy logs and
		// browser history for nothing: only the WebSocket needs it.
		hint = "; an API key goes in the Authorization header (?key= is read only by the WebSocket endpoint GET /v1/stream)"
	case len(allowed) == 0:
		hint = "; this endpoint takes none"
	default:
		hint = "; this endpoint takes " + strings.Join(allowed, ", ")
	}
	return podium.Errorf(podium.ECodeInvalid, "unknown query parameter %q%s", name, hint)
}

// queryValue returns a query parameter that checkQuery let through (at most
// one of each name), without parsing the whole query into a map.
func queryValue(r *http.Request, name string) (string, bool) {
	raw := r.URL.RawQuery
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(part, "=")
		if k != name {
			if !strings.ContainsAny(k, "%+") {
				continue
			}
			if u, err := url.QueryUnescape(k); err != nil || u != name {
				continue
			}
		}
		if strings.ContainsAny(v, "%+") {
			v, _ = url.QueryUnescape(v)
		}
		return v, true
	}
	return "", false
}

// queryInt parses an integer query parameter within [min, max].
func queryInt(r *http.Request, name string, def, min, max int) (int, error) {
	v, _ := queryValue(r, name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, podium.Errorf(podium.ECodeInvalid, "%s must be an integer from %d to %d", name, min, max)
	}
	return n, nil
}

// queryBool parses a boolean query parameter.
func queryBool(r *http.Request, name string) (bool, error) {
	v, _ := queryValue(r, name)
	switch strings.ToLower(v) {
	case "", "0", "false", "no":
		return false, nil
	case "1", "true", "yes":
		return true, nil
	}
	return false, podium.Errorf(podium.ECodeInvalid, "%s must be true or false", name)
}

// maxOffset bounds the offset query parameter of every paged read.
const maxOffset = 1<<31 - 1

// queryPage parses the offset (default 0) and limit (default 100, 1 to
// 1000) query parameters of a paged read.
func queryPage(r *http.Request) (offset, limit int, err error) {
	if offset, err = queryInt(r, "offset", 0, 0, maxOffset); err != nil {
		return 0, 0, err
	}
	if limit, err = queryInt(r, "limit", 100, 1, 1000); err != nil {
		return 0, 0, err
	}
	return offset, limit, nil
}

// queryPercent parses a percentage query parameter greater than 0 and at
// most 100 with at most two decimals ("10", "2.5", "0.25") into hundredths
// of a percent (1000, 250, 25); absent is 0.
func queryPercent(r *http.Request, name string) (int, error) {
	v, ok := queryValue(r, name)
	if !ok {
		return 0, nil
	}
	whole, frac, dot := strings.Cut(v, ".")
	h, good := 0, len(whole) >= 1 && len(whole) <= 3 && (!dot || len(frac) >= 1 && len(frac) <= 2)
	for _, c := range whole + frac {
		good = good && c >= '0' && c <= '9'
	}
	if good {
		n, _ := strconv.Atoi(whole)
		f, _ := strconv.Atoi((frac + "00")[:2])
		h = n*100 + f
	}
	if !good || h < 1 || h > 10000 {
		return 0, podium.Errorf(podium.ECodeInvalid, "%s must be a number above 0 and at most 100, with at most two decimals (like 10 or 2.5)", name)
	}
	return h, nil
}

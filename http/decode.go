package http

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/podiumhq/podium"
)

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads a request body of at most limit bytes after checking that
// it is declared as JSON. The buffer goes back to the pool with putBody.
func readBody(r *http.Request, limit int64) (*bytes.Buffer, error) {
	// A body declared as something else (a form, text) is refused; one sent
	// without any Content-Type is read as JSON, as most clients mean it.
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" { // the usual one, without parsing
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, podium.Errorf(podium.ECodeUnsupportedType, "the body must be application/json, not %s", ct)
		}
	}
	if r.ContentLength > limit {
		return nil, podium.Errorf(podium.ECodeTooLarge, "the body is larger than %d bytes", limit)
	}
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	_, err := buf.ReadFrom(io.LimitReader(r.Body, limit+1))
	if err != nil {
		putBody(buf)
		var slow *errBodyTimeout
		if errors.As(err, &slow) {
			return nil, podium.Errorf(codeRequestTimeout, "%s; the connection is closed", slow.msg)
		}
		return nil, podium.Errorf(podium.ECodeInvalid, "could not read the body: %v", err)
	}
	if int64(buf.Len()) > limit {
		putBody(buf)
		return nil, podium.Errorf(podium.ECodeTooLarge, "the body is larger than %d bytes", limit)
	}
	return buf, nil
}

// readNoBody reads the body of an action that takes none: absent, or an
// empty JSON object (what some clients always send); anything else is a
// 400, as for any body.
func readNoBody(r *http.Request, limit int64) error {
	buf, err := readBody(r, limit)
	if err != nil {
		return err
	}
	defer putBody(buf)
	if buf.Len() == 0 {
		return nil
	}
	var empty struct{}
	return decodeStrict(buf.Bytes(), &empty)
}

func putBody(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		bodyPool.Put(b)
	}
}

// decodeStrict decodes the one JSON value of data into v, a pointer to a
// struct. It refuses what is not I-JSON (invalid UTF-8, lone surrogate
// escapes, a name given twice: invalid_json), field names that are not
// exactly the struct's json names, wrong types and trailing data. See
// strictjson.go.
func decodeStrict(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	d := decoder{data: data}
	if err := d.decode(rv.Elem(), planFor(rv.Type().Elem())); err != nil {
		return bodyError(data, err)
	}
	return nil
}

// bodyError is the API error for a body that failed to decode. When the
// first problem found is one of shape, the rest of the body is checked
// too: a body that is not I-JSON is invalid_json whatever else is wrong.
func bodyError(data []byte, err *jsonError) error {
	if err.kind == errShape {
		if e := firstNonShape(data); e != nil {
			err = e
		}
	}
	return err.toPodium("the body")
}

// batchItems are the submissions of a batch. The decoder fills them one by
// one: an item whose names or types do not fit (an unknown or case-folded
// name, a name given twice, a wrong type) fails alone, while a body that is
// not JSON or not UTF-8 text fails as a whole.
type batchItems []scoreBody

type batchBody struct {
	Scores batchItems `json:"scores"`
}

// decodeBatch decodes {"scores": [...]}. It returns the items and, when
// some failed to decode, an error per item (nil for the good ones).
func decodeBatch(data []byte) ([]scoreBody, []error, error) {
	var bb batchBody
	d := decoder{data: data}
	if err := d.decode(reflect.ValueOf(&bb).Elem(), planFor(reflect.TypeFor[batchBody]())); err != nil {
		return nil, nil, bodyError(data, err)
	}
	if d.extra > 0 {
		return nil, nil, podium.Errorf(podium.ECodeTooLarge, "a batch holds at most %d scores; got %d", podium.MaxBatchItems, podium.MaxBatchItems+d.extra)
	}
	if bb.Scores == nil {
		return nil, nil, podium.Errorf(podium.ECodeInvalid, "scores (an array of submissions) is required")
	}
	return bb.Scores, d.itemErr, nil
}

// batch decodes the array of a batch into dst (see batchItems).
func (d *decoder) batch(dst *batchItems, p *plan) *jsonError {
	if err := d.open(); err != nil {
		return err
	}
	// About 50 bytes a submission at least: one allocation for most.
	items := make(batchItems, 0, min(len(d.data)/50+1, podium.MaxBatchItems))
	if d.empty(']') {
		*dst = items
		return nil
	}
	for {
		d.skipSpace()
		if len(items) == podium.MaxBatchItems {
			// Too many: count the rest, still checking the body.
			if err := d.skip(false); err != nil {
				return err
			}
			d.extra++
		} else {
			start, depth := d.i, d.depth
			items = append(items, scoreBody{})
			n := len(items) - 1
			if err := d.value(reflect.ValueOf(&items[n]).Elem(), p); err != nil {
				if err.kind != errShape && err.kind != errDuplicate {
					return err
				}
				// Only this item fails; the body must still be JSON text.
				items[n] = scoreBody{}
				d.i, d.depth = start, depth
				if err := d.skip(false); err != nil {
					return err
				}
				for len(d.itemErr) < n {
					d.itemErr = append(d.itemErr, nil)
				}
				d.itemErr = append(d.itemErr, err.toPodium("the submission"))
			}
		}
		more, err := d.next(']')
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if d.itemErr != nil {
		for len(d.itemErr) < len(items) {
			d.itemErr = append(d.itemErr, nil)
		}
	}
	*dst = items
	return nil
}

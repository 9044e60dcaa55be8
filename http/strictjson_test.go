package http

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/podiumhq/podium"
)

// TestStrictJSONRefuses: names match exactly and once, text is I-JSON, and
// the error says what is wrong, with invalid_json for a body that is not
// I-JSON and invalid_argument for one that does not fit.
func TestStrictJSONRefuses(t *testing.T) {
	deep := `{"player":"p","meta":{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`
	tests := []struct {
		name, body string
		target     any
		code, msg  string
	}{
		{"case-folded name overrides", `{"player":"legit","pLaYeR":"victim"}`, &scoreBody{}, "invalid_argument", `unknown field "pLaYeR" (field names are case-sensitive; did you mean "player"?)`},
		{"capitalised name", `{"Player":"x","score":1}`, &scoreBody{}, "invalid_argument", `unknown field "Player"`},
		{"kelvin sign folds to k", `{"player":"x","\u212aeys":[1]}`, &scoreBody{}, "invalid_argument", `did you mean "keys"?`},
		{"duplicate name", `{"player":"a","player":"b"}`, &scoreBody{}, "invalid_json", `duplicate field "player"`},
		{"duplicate through an escape", `{"player":"a","pl\u0061yer":"b"}`, &scoreBody{}, "invalid_json", `duplicate field "player"`},
		{"duplicate in meta", `{"player":"a","meta":{"k":1,"k":2}}`, &scoreBody{}, "invalid_json", `duplicate field "meta.k"`},
		{"duplicate deep in meta", `{"player":"a","meta":{"k":[{"x":1,"y":2,"x":3}]}}`, &scoreBody{}, "invalid_json", `duplicate field "meta.k[0].x"`},
		{"duplicate in a nested struct", `{"reset":{"every":"day","every":"week"}}`, &boardBody{}, "invalid_json", `duplicate field "reset.every"`},
		{"unknown name in a nested struct", `{"keys":[{"name":"a","Order":"asc"}]}`, &boardBody{}, "invalid_argument", `unknown field "keys[0].Order"`},
		{"invalid UTF-8 in a string", "{\"player\":\"a\xff\"}", &scoreBody{}, "invalid_json", "invalid UTF-8 at byte 12"},
		{"invalid UTF-8 in meta", "{\"player\":\"a\",\"meta\":{\"x\":\"\xff\xfe\"}}", &scoreBody{}, "invalid_json", "invalid UTF-8"},
		{"invalid UTF-8 in a name", "{\"player\":\"a\",\"meta\":{\"\xc0\xaf\":1}}", &scoreBody{}, "invalid_json", "invalid UTF-8"},
		{"UTF-8 encoded surrogate", "{\"player\":\"\xed\xa0\x80\"}", &scoreBody{}, "invalid_json", "invalid UTF-8"},
		{"invalid UTF-8 outside strings", "{\"player\":\xff}", &scoreBody{}, "invalid_json", "invalid UTF-8"},
		{"truncated UTF-8", "{\"player\":\"\xe2\x82\"}", &scoreBody{}, "invalid_json", "invalid UTF-8"},
		{"lone low surrogate", `{"player":"a\udc00"}`, &scoreBody{}, "invalid_json", `lone surrogate escape \udc00`},
		{"lone high surrogate", `{"player":"a\ud800"}`, &scoreBody{}, "invalid_json", `lone surrogate escape \ud800`},
		{"high surrogate then a letter", `{"player":"a\ud800\u0041"}`, &scoreBody{}, "invalid_json", `lone surrogate escape \ud800`},
		{"two high surrogates", `{"player":"\uD800\uD800"}`, &scoreBody{}, "invalid_json", `lone surrogate escape \ud800`},
		{"lone surrogate in a name", `{"player":"a","meta":{"\udfff":1}}`, &scoreBody{}, "invalid_json", "lone surrogate"},
		{"not I-JSON wins over a shape error", "{\"Player\":\"\xff\"}", &scoreBody{}, "invalid_json", "invalid UTF-8"},
		{"duplicate wins over a shape error", `{"Player":1,"Player":2}`, &scoreBody{}, "invalid_json", `duplicate field "Player"`},
		{"too deep", deep, &scoreBody{}, "invalid_json", "nested deeper than 1000 levels"},
		{"malformed", `{"player":`, &scoreBody{}, "invalid_json", "ends too early"},
		{"bad escape", `{"player":"\x"}`, &scoreBody{}, "invalid_json", `invalid escape`},
		{"raw control character", "{\"player\":\"a\tb\"}", &scoreBody{}, "invalid_json", "control character"},
		{"leading zero", `{"score":01}`, &scoreBody{}, "invalid_json", "malformed JSON"},
		{"single quotes", `{'player':1}`, &scoreBody{}, "invalid_json", "malformed JSON"},
		{"trailing comma", `{"player":"a",}`, &scoreBody{}, "invalid_json", "malformed JSON"},
		{"trailing data", `{"player":"a"} {}`, &scoreBody{}, "invalid_json", "data after the JSON value"},
		{"empty", " \n", &scoreBody{}, "invalid_json", "empty"},
		{"not an object", `[1,2]`, &scoreBody{}, "invalid_argument", "the body must be a JSON object"},
		{"float key", `{"keys":[1.5]}`, &scoreBody{}, "invalid_argument", "field keys[0] must be an integer in the int64 range (got number 1.5)"},
		{"exponent", `{"score":1e3}`, &scoreBody{}, "invalid_argument", "got number 1e3"},
		{"above int64", `{"keys":[9223372036854775808]}`, &scoreBody{}, "invalid_argument", "int64 range"},
		{"string key", `{"keys":["1"]}`, &scoreBody{}, "invalid_argument", "(got string)"},
		{"wrong type", `{"player":5}`, &scoreBody{}, "invalid_argument", "field player has the wrong type (got number, want string)"},
		{"wrong type nested", `{"keys":[{"name":"a","order":5}]}`, &boardBody{}, "invalid_argument", "field keys[0].order has the wrong type"},
		{"bool", `{"public":"yes"}`, &boardBody{}, "invalid_argument", "field public has the wrong type (got string, want boolean)"},
		{"int out of range for int", `{"op":"subscribe","limit":1.5}`, &wsMessage{}, "invalid_argument", "field limit must be an integer"},
		{"string list", `{"name":"k","scopes":["read",1]}`, &keyBody{}, "invalid_argument", "field scopes[1] has the wrong type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := decodeStrict([]byte(tc.body), tc.target)
			if err == nil {
				t.Fatalf("accepted %q: %+v", tc.body, reflect.ValueOf(tc.target).Elem())
			}
			if c := podium.ErrorCode(err); c != tc.code {
				t.Fatalf("code %s, want %s (%v)", c, tc.code, err)
			}
			if msg := podium.ErrorMessage(err); !strings.Contains(msg, tc.msg) {
				t.Fatalf("message %q lacks %q", msg, tc.msg)
			}
		})
	}
}

// TestStrictJSONAccepts: what is valid decodes as encoding/json decodes it.
func TestStrictJSONAccepts(t *testing.T) {
	bodies := []string{
		`{"player":"alice","keys":[41234,150],"meta":{"replay":"r-9f2"}}`,
		`{"player":"\ud83d\ude00 \u00e9\t\"\\\/\b\f\n\r","score":-9223372036854775808}`,
		"{\"player\":\"\u00e9\u4e16\U0001F600\uFFFF\",\"keys\":[]}",
		` { "board" : "b" , "player" : "p" , "keys" : [ 1 , -0 ] , "meta" : null } `,
		`{"player":null,"keys":null,"score":null,"meta":{"a":{"a":{"a":[1,"x",true,false,null,1.5e-3]}},"b":"\u0061"}}`,
		`{"meta":{"a":1,"A":2,"b":3,"c":4,"d":5,"e":6,"f":7,"g":8,"h":9,"i":10,"j":11}}`,
		`{}`,
	}
	for _, b := range bodies {
		var got, want scoreBody
		if err := decodeStrict([]byte(b), &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if err := json.Unmarshal([]byte(b), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %#v\nwant %#v", b, got, want)
		}
	}
	var bb boardBody
	b := `{"id":"x","title":"T","keys":[{"name":"a","order":"asc"},{"name":"b","order":"desc"}],"mode":"sum","reset":{"every":"day","tz":"UTC"},"public":false,"meta":{}}`
	if err := decodeStrict([]byte(b), &bb); err != nil {
		t.Fatal(err)
	}
	var want boardBody
	json.Unmarshal([]byte(b), &want)
	if !reflect.DeepEqual(bb, want) || bb.Public == nil || *bb.Public {
		t.Fatalf("board:\n got %#v\nwant %#v", bb, want)
	}
}

// TestBatchItemsFailAlone: inside a batch, an item whose names or types do
// not fit fails alone; text that is not I-JSON fails the whole body.
func TestBatchItemsFailAlone(t *testing.T) {
	body := `{"scores":[
		{"board":"b","player":"ok1","score":1},
		{"board":"b","player":"legit","pLaYeR":"victim","score":1},
		{"board":"b","player":"a","player":"b","score":1},
		{"board":"b","player":"m","score":1,"meta":{"k":1,"k":2}},
		{"board":"b","player":"t","keys":"x"},
		7,
		{"board":"b","player":"ok2","score":2}]}`
	items, errs, err := decodeBatch([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", "invalid_argument", "invalid_json", "invalid_json", "invalid_argument", "invalid_argument", ""}
	if len(items) != len(want) || len(errs) != len(want) {
		t.Fatalf("%d items, %d errors", len(items), len(errs))
	}
	for i, w := range want {
		switch {
		case w == "" && (errs[i] != nil || items[i].Player == ""):
			t.Fatalf("item %d: %v %+v", i, errs[i], items[i])
		case w != "" && podium.ErrorCode(errs[i]) != w:
			t.Fatalf("item %d: %v, want %s", i, errs[i], w)
		case w != "" && items[i].Player != "":
			t.Fatalf("failed item %d kept %+v", i, items[i])
		}
	}
	if msg := podium.ErrorMessage(errs[5]); msg != "the submission must be a JSON object" {
		t.Fatal(msg)
	}
	if items[6].Player != "ok2" || *items[6].Score != 2 {
		t.Fatalf("item after the failures: %+v", items[6])
	}

	whole := []string{
		"{\"scores\":[{\"board\":\"b\",\"player\":\"a\xff\",\"score\":1}]}",
		"{\"scores\":[{\"board\":\"b\",\"Player\":\"a\",\"meta\":{\"x\":\"\xfe\"}}]}",
		`{"scores":[{"board":"b","player":"a\udc00","score":1}]}`,
		`{"scores":[{"board":"b","Player":"a","x":"\ud800"}]}`,
		`{"scores":[{"board":"b","player":"a","score":1}],"scores":[]}`,
		`{"scores":[{"board":"b","player":"a","score":1},]}`,
		`{"scores":[{"board":"b","player":"a","score":1}`,
	}
	for _, b := range whole {
		if _, _, err := decodeBatch([]byte(b)); podium.ErrorCode(err) != podium.ECodeInvalidJSON {
			t.Errorf("%q: %v, want invalid_json for the whole body", b, err)
		}
	}
	if _, _, err := decodeBatch([]byte(`{"Scores":[]}`)); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Errorf("case-folded envelope: %v", err)
	}
	many := `{"scores":[` + strings.Repeat(`{"board":"b","player":"p","score":1},`, podium.MaxBatchItems) + `{"board":"b","player":"p","score":1}]}`
	if _, _, err := decodeBatch([]byte(many)); podium.ErrorCode(err) != podium.ECodeTooLarge || !strings.Contains(err.Error(), "got 10001") {
		t.Errorf("too many: %v", err)
	}
}

// FuzzStrictJSON compares the decoder with encoding/json: what it accepts,
// encoding/json decodes to the same value; what encoding/json refuses, it
// refuses; and what only it refuses breaks one of the strict rules.
func FuzzStrictJSON(f *testing.F) {
	for _, s := range []string{
		`{"player":"alice","keys":[41234,150],"meta":{"replay":"r-9f2"}}`,
		`{"player":"legit","pLaYeR":"victim"}`,
		`{"player":"a","player":"b"}`,
		`{"player":"\ud83d\ude00","score":-1}`,
		`{"player":"a\udc00"}`,
		"{\"player\":\"a\xff\"}",
		`{"board":"b","keys":[1,2,3,4],"score":null,"meta":{"a":[{"b":null}],"c":1.5e10}}`,
		`{"keys":[1.0]}`,
		`{"meta":{"k":1,"k":2}}`,
		`{"meta":"x"}`,
		`[]`,
		`{"player":"a"} x`,
		`{"id":"x","title":"T","keys":[{"name":"a","order":"asc"}],"mode":"sum","reset":{"every":"day","tz":"UTC"},"public":true,"meta":{}}`,
		`{"title":null,"public":null,"reset":null,"keys":[]}`,
		`{"name":"k","scopes":["read","submit"],"boards":["ms:"]}`,
		`{"op":"subscribe","board":"b","limit":50,"last_event_id":"1.2","id":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareStd[scoreBody](t, data)
		compareStd[boardBody](t, data)
		compareStd[keyBody](t, data)
		compareStd[wsMessage](t, data)
	})
}

var surrogateEscape = regexp.MustCompile(`(?i)\\u[d][89a-f]`)

func compareStd[T any](t *testing.T, data []byte) {
	var got, want T
	err := decodeStrict(data, &got)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	stdErr := dec.Decode(&want)
	if stdErr == nil {
		if _, e := dec.Token(); e != io.EOF {
			stdErr = errTrailing
		}
	}
	switch {
	case err == nil && stdErr != nil:
		t.Fatalf("%T: accepted what encoding/json refuses (%v): %q", got, stdErr, data)
	case err == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
	case err != nil && stdErr == nil:
		// Only the strict rules may refuse what encoding/json takes.
		msg := podium.ErrorMessage(err)
		switch {
		case strings.Contains(msg, "duplicate field"), strings.Contains(msg, "nested deeper"):
		case strings.Contains(msg, "invalid UTF-8") && !utf8.Valid(data):
		case strings.Contains(msg, "lone surrogate") && surrogateEscape.Match(data):
		case strings.Contains(msg, "case-sensitive"):
		default:
			t.Fatalf("%T: refused what encoding/json takes: %v: %q", got, err, data)
		}
	}
}

var errTrailing = podium.Errorf(podium.ECodeInvalidJSON, "trailing data")

package http

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Plans: how the strict decoder (strictjson.go) fills each Go type, built
// once per type.

// planKind is what a plan decodes into.
type planKind uint8

const (
	kString planKind = iota
	kBool
	kInt
	kInt64s // []int64, the submit path's keys, filled without reflection
	kPtr
	kSlice
	kStruct
	kRaw     // json.RawMessage: any JSON value, checked and copied
	kBatch   // batchItems: submissions that fail one by one
	kStrings // []string without reflection per element
)

// plan describes how to decode into one Go type.
type plan struct {
	kind   planKind
	typ    reflect.Type
	elem   *plan       // kPtr, kSlice
	fields []fieldPlan // kStruct
}

type fieldPlan struct {
	name  string
	index int
	plan  *plan
}

var (
	plans     sync.Map // reflect.Type -> *plan
	rawType   = reflect.TypeFor[json.RawMessage]()
	int64sTyp = reflect.TypeFor[[]int64]()
	strsType  = reflect.TypeFor[[]string]()
	batchType = reflect.TypeFor[batchItems]()
)

// planFor returns the plan of t, building it on first use. A type the
// decoder cannot fill is a programming error and panics (the tests decode
// every body type).
func planFor(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	p := buildPlan(t, map[reflect.Type]*plan{})
	plans.Store(t, p)
	return p
}

func buildPlan(t reflect.Type, building map[reflect.Type]*plan) *plan {
	if p, ok := building[t]; ok {
		return p
	}
	p := &plan{typ: t}
	building[t] = p
	switch {
	case t == rawType:
		p.kind = kRaw
	case t == int64sTyp:
		p.kind = kInt64s
	case t == strsType:
		p.kind = kStrings
	case t == batchType:
		p.kind = kBatch
		p.elem = buildPlan(t.Elem(), building)
	default:
		switch t.Kind() {
		case reflect.String:
			p.kind = kString
		case reflect.Bool:
			p.kind = kBool
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			p.kind = kInt
		case reflect.Pointer:
			p.kind = kPtr
			p.elem = buildPlan(t.Elem(), building)
		case reflect.Slice:
			p.kind = kSlice
			p.elem = buildPlan(t.Elem(), building)
		case reflect.Struct:
			p.kind = kStruct
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "-" || !f.IsExported() {
					continue
				}
				if f.Anonymous {
					panic("strict JSON: embedded field " + f.Name + " in " + t.String())
				}
				if name == "" {
					name = f.Name
				}
				p.fields = append(p.fields, fieldPlan{name: name, index: i, plan: buildPlan(f.Type, building)})
			}
			if len(p.fields) > 64 {
				panic("strict JSON: more than 64 fields in " + t.String())
			}
		default:
			panic("strict JSON: cannot decode into " + t.String())
		}
	}
	return p
}

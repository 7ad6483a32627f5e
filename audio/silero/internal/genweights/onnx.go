package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The few fields of the ONNX protobuf schema (onnx/onnx.proto, IR version 8) this reader
// needs: a model's graph, the graph's initializers and its nodes' subgraphs (If branches
// may hold initializers too), and a tensor's name, shape and float data.
//
//	ModelProto  { graph = 7 }
//	GraphProto  { node = 1; initializer = 5 }
//	NodeProto   { attribute = 5 }
//	AttributeProto { g = 6; graphs = 11 }
//	TensorProto { dims = 1; data_type = 2; float_data = 4; name = 8; raw_data = 9 }
const (
	modelGraph       = 7
	graphNode        = 1
	graphInitializer = 5
	nodeAttribute    = 5
	attrGraph        = 6
	attrGraphs       = 11
	tensorDims       = 1
	tensorDataType   = 2
	tensorFloatData  = 4
	tensorName       = 8
	tensorRawData    = 9

	dataTypeFloat = 1 // TensorProto.DataType FLOAT
)

// tensor is one float32 initializer.
type tensor struct {
	name string
	dims []int
	data []float32
}

// field is one protobuf field: its number, wire type and value (varint or bytes).
type field struct {
	num   int
	wire  int
	value uint64
	bytes []byte
}

// fields splits a protobuf message into its fields.
func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("onnx: bad field key")
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0: // varint
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return nil, fmt.Errorf("onnx: field %d: bad varint", f.num)
			}
			f.value, b = v, b[n:]
		case 1: // 64-bit
			if len(b) < 8 {
				return nil, fmt.Errorf("onnx: field %d: short fixed64", f.num)
			}
			f.value, b = binary.LittleEndian.Uint64(b), b[8:]
		case 2: // length-delimited
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return nil, fmt.Errorf("onnx: field %d: bad length", f.num)
			}
			f.bytes, b = b[n:n+int(l)], b[n+int(l):]
		case 5: // 32-bit
			if len(b) < 4 {
				return nil, fmt.Errorf("onnx: field %d: short fixed32", f.num)
			}
			f.value, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		default:
			return nil, fmt.Errorf("onnx: field %d: wire type %d not supported", f.num, f.wire)
		}
		out = append(out, f)
	}
	return out, nil
}

// initializers returns every float32 initializer of the model, its subgraphs' included.
func initializers(model []byte) ([]tensor, error) {
	fs, err := fields(model)
	if err != nil {
		return nil, err
	}
	var out []tensor
	for _, f := range fs {
		if f.num == modelGraph && f.wire == 2 {
			if out, err = graphInitializers(f.bytes, out); err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("onnx: no initializers (not an ONNX model?)")
	}
	return out, nil
}

func graphInitializers(graph []byte, out []tensor) ([]tensor, error) {
	fs, err := fields(graph)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		switch {
		case f.num == graphInitializer && f.wire == 2:
			t, err := parseTensor(f.bytes)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		case f.num == graphNode && f.wire == 2:
			if out, err = nodeSubgraphs(f.bytes, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func nodeSubgraphs(node []byte, out []tensor) ([]tensor, error) {
	fs, err := fields(node)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		if f.num != nodeAttribute || f.wire != 2 {
			continue
		}
		as, err := fields(f.bytes)
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			if (a.num == attrGraph || a.num == attrGraphs) && a.wire == 2 {
				if out, err = graphInitializers(a.bytes, out); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

func parseTensor(b []byte) (tensor, error) {
	fs, err := fields(b)
	if err != nil {
		return tensor{}, err
	}
	var t tensor
	dtype := 0
	var raw []byte
	for _, f := range fs {
		switch f.num {
		case tensorName:
			t.name = string(f.bytes)
		case tensorDataType:
			dtype = int(f.value)
		case tensorDims:
			if f.wire == 2 { // packed
				for p := f.bytes; len(p) > 0; {
					v, n := binary.Uvarint(p)
					if n <= 0 {
						return t, errors.New("onnx: bad packed dims")
					}
					t.dims, p = append(t.dims, int(v)), p[n:]
				}
			} else {
				t.dims = append(t.dims, int(f.value))
			}
		case tensorRawData:
			raw = f.bytes
		case tensorFloatData:
			if f.wire == 2 {
				raw = append(raw, f.bytes...)
			} else {
				raw = binary.LittleEndian.AppendUint32(raw, uint32(f.value))
			}
		}
	}
	if dtype != dataTypeFloat {
		return tensor{name: t.name}, nil // not a float tensor: kept by name only
	}
	n := 1
	for _, d := range t.dims {
		n *= d
	}
	if len(raw) != 4*n {
		return t, fmt.Errorf("onnx: tensor %s: %d bytes for %v", t.name, len(raw), t.dims)
	}
	t.data = make([]float32, n)
	for i := range t.data {
		t.data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return t, nil
}

#!/usr/bin/env python3
"""Writes the embed crate's two tiny sentence-embedding graphs, deterministically.

    python3 embed/testdata/make_tiny_model.py      (onnx==1.23.2, from scripts/setup.sh)

Reads the vocabulary of tiny-tokenizer.json (written by the tokenizers crate, see
embed/tests/testdata.rs) and writes, beside this script:

* tiny.onnx: inputs input_ids and attention_mask (int64 [batch, tokens]); outputs
  last_hidden_state (float [batch, tokens, 32]: a Gather from the embedding table)
  and sentence_embedding (float [batch, 32]: the mean of the rows whose mask is 1).
* tiny-in-graph.onnx: a graph that tokenizes itself. Input text (string [batch]);
  StringSplit on whitespace, LabelEncoder from each piece to its id in the same
  vocabulary (unknown pieces 1, padding 0), the same table, the masked mean; output
  sentence_embedding (float [batch, 32]).

The table has no randomness: row 0 ([PAD]) is zero and every other entry is
(splitmix64(id * 32 + component) mod 2049 - 1024) / 1024, an integer formula whose
values are exact in float32. So two texts sharing characters share rows, and their
mean vectors are closer than those of texts sharing none.

The project's own work, under the project's licence (MIT OR Apache-2.0).
"""

import json
import os
import sys

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
DIM = 32
MASK64 = (1 << 64) - 1
OPSET = 20  # StringSplit is opset 20
ML_OPSET = 2  # LabelEncoder with keys_strings / values_int64s
IR_VERSION = 10
PRODUCER = "lorebank embed/testdata/make_tiny_model.py"


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def table(vocab_size):
    values = []
    for token_id in range(vocab_size):
        for component in range(DIM):
            if token_id == 0:
                values.append(0.0)
            else:
                values.append((splitmix64(token_id * DIM + component) % 2049 - 1024) / 1024.0)
    return helper.make_tensor("table", TensorProto.FLOAT, [vocab_size, DIM], values)


def masked_mean(nodes, initializers, hidden, mask_float, output):
    """Appends nodes computing sum(hidden * mask) / max(sum(mask), 1) over tokens."""
    initializers.append(helper.make_tensor("axis_2", TensorProto.INT64, [1], [2]))
    initializers.append(helper.make_tensor("axis_1", TensorProto.INT64, [1], [1]))
    initializers.append(helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]))
    nodes += [
        helper.make_node("Unsqueeze", [mask_float, "axis_2"], ["mask_3d"]),
        helper.make_node("Mul", [hidden, "mask_3d"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis_1"], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["mask_3d", "axis_1"], ["count"], keepdims=0),
        helper.make_node("Max", ["count", "one"], ["count_at_least_one"]),
        helper.make_node("Div", ["summed", "count_at_least_one"], [output]),
    ]


def model(graph):
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("ai.onnx.ml", ML_OPSET)]
    result = helper.make_model(graph, opset_imports=opsets, producer_name=PRODUCER, producer_version="1")
    result.ir_version = IR_VERSION
    onnx.checker.check_model(result, full_check=True)
    return result


def token_model(vocab_size):
    initializers = [table(vocab_size)]
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mask_float"], to=TensorProto.FLOAT),
    ]
    masked_mean(nodes, initializers, "last_hidden_state", "mask_float", "sentence_embedding")
    graph = helper.make_graph(
        nodes,
        "lorebank_tiny_char_mean",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [
            helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", DIM]),
            helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", DIM]),
        ],
        initializers,
    )
    return model(graph)


def in_graph_model(vocab):
    keys = [""] + [token for token, _ in sorted(vocab.items(), key=lambda item: item[1]) if token != "[PAD]"]
    values = [0] + [vocab[token] for token in keys[1:]]
    initializers = [table(max(vocab.values()) + 1), helper.make_tensor("zero", TensorProto.INT64, [], [0])]
    nodes = [
        helper.make_node("StringSplit", ["text"], ["pieces", "n_pieces"]),
        helper.make_node(
            "LabelEncoder",
            ["pieces"],
            ["ids"],
            domain="ai.onnx.ml",
            keys_strings=keys,
            values_int64s=values,
            default_int64=1,
        ),
        helper.make_node("Gather", ["table", "ids"], ["hidden"], axis=0),
        helper.make_node("Equal", ["ids", "zero"], ["is_padding"]),
        helper.make_node("Not", ["is_padding"], ["is_token"]),
        helper.make_node("Cast", ["is_token"], ["mask_float"], to=TensorProto.FLOAT),
    ]
    masked_mean(nodes, initializers, "hidden", "mask_float", "sentence_embedding")
    graph = helper.make_graph(
        nodes,
        "lorebank_tiny_in_graph_mean",
        [helper.make_tensor_value_info("text", TensorProto.STRING, ["batch"])],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", DIM])],
        initializers,
    )
    return model(graph)


def write(name, proto):
    path = os.path.join(HERE, name)
    with open(path + ".part", "wb") as out:
        out.write(proto.SerializeToString(deterministic=True))
    os.replace(path + ".part", path)
    print(f"wrote {path}")


def main():
    if onnx.__version__ != "1.23.2":
        sys.exit(f"make_tiny_model.py: needs onnx 1.23.2 (scripts/setup.sh), found {onnx.__version__}")
    with open(os.path.join(HERE, "tiny-tokenizer.json"), encoding="utf-8") as file:
        vocab = json.load(file)["model"]["vocab"]
    if sorted(vocab.values()) != list(range(len(vocab))) or vocab.get("[PAD]") != 0:
        sys.exit("make_tiny_model.py: the vocabulary must have dense ids with [PAD] = 0")
    write("tiny.onnx", token_model(len(vocab)))
    write("tiny-in-graph.onnx", in_graph_model(vocab))


if __name__ == "__main__":
    main()

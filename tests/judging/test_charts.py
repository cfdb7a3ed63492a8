"""Charts are accessible SVG with their numbers in text, and escape imported names."""

import xml.etree.ElementTree as ET

from judging.charts import bars_svg, heatmap_svg, interval_svg, reliability_svg

NS = "{http://www.w3.org/2000/svg}"


def parse(svg):
    root = ET.fromstring(svg)
    assert root.get("role") == "img"
    return root, root.find(f"{NS}title").text, root.find(f"{NS}desc").text


def test_heatmap_states_counts_and_row_shares_and_escapes_labels():
    root, title, desc = parse(heatmap_svg(["<pass>", "fail"], [[8, 2], [1, 9]]))
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "<pass>" in texts  # escaped in the markup, intact once parsed
    assert "80%" in texts and "90%" in texts and "8" in texts
    assert "human <pass>, judge fail: 2" in desc


def test_interval_describes_value_ci_and_threshold():
    _, _, desc = parse(interval_svg(0.7, [0.61, 0.79], threshold=0.6))
    assert desc == "0.700, 95% CI 0.610 to 0.790; gate threshold 0.60"
    _, _, undefined = parse(interval_svg(None, None))
    assert undefined == "undefined"


def test_reliability_and_bars():
    bins = [
        {"low": 0.5, "high": 0.6, "count": 10, "accuracy": 0.4},
        {"low": 0.9, "high": 1.0, "count": 0, "accuracy": None},
    ]
    _, _, desc = parse(reliability_svg(bins))
    assert desc == "confidence 0.5-0.6: accuracy 0.40 (n=10)"
    _, _, bars = parse(bars_svg([("task ambiguity", 3), ("judge error", 1)]))
    assert bars == "task ambiguity: 3; judge error: 1"


def test_interval_has_an_axis_ticked_0_to_1_and_labelled():
    root, _, _ = parse(interval_svg(0.7, [0.61, 0.79], lo=-0.2, axis="κ"))
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert texts == ["κ", "0", "0.5", "1"]  # no gate: no gate label


def test_interval_is_readable_at_1280x800_and_names_its_gate():
    root, _, _ = parse(interval_svg(0.7, [0.61, 0.79], threshold=0.6, lo=-0.2))
    assert float(root.get("width")) >= 320
    texts = {t.text: t for t in root.iter(f"{NS}text")}
    assert all(float(t.get("font-size")) >= 11 for t in texts.values())
    gate = texts["gate 0.60"]  # the dashed line's label, drawn in the chart
    line = next(ln for ln in root.iter(f"{NS}line") if ln.get("stroke-dasharray"))
    assert abs(float(gate.get("x")) - float(line.get("x1"))) <= 3
    plain, _, _ = parse(interval_svg(0.7, [0.61, 0.79], lo=-0.2))
    assert "gate" not in "".join(t.text for t in plain.iter(f"{NS}text"))


def test_a_heading_is_drawn_above_the_chart_for_downloads():
    labels, counts = ["pass", "fail"], [[1, 0], [0, 1]]
    root, title, _ = parse(heatmap_svg(labels, counts, heading="faithful · gpt"))
    assert root.find(f"{NS}text").text == "faithful · gpt" and title == "Confusion matrix"
    plain, _, _ = parse(heatmap_svg(labels, counts))
    assert float(root.get("height")) > float(plain.get("height"))


def test_the_reliability_y_label_stands_clear_of_the_tick_labels():
    root, _, _ = parse(reliability_svg([{"low": 0.5, "high": 0.6, "count": 1, "accuracy": 1.0}]))
    label = next(t for t in root.iter(f"{NS}text") if t.text == "Observed accuracy")
    assert "rotate(-90)" in label.get("transform")

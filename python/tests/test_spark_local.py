"""The README's local Spark example binds to loopback, starts no UI, and
prints what it shows."""

import contextlib
import io
import os
import re
from pathlib import Path


README = Path(__file__).resolve().parents[1] / "README.md"


def local_example() -> str:
    """The README's Spark block with a local master."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    local = [b for b in blocks if "SparkSession" in b and 'master("local' in b]
    assert len(local) == 1, "python/README.md has no (or several) local Spark examples"
    return local[0]


def test_local_spark_example_settings():
    code = local_example()
    for setting in ('os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")',
                    '.config("spark.driver.bindAddress", "127.0.0.1")',
                    '.config("spark.driver.host", "127.0.0.1")',
                    '.config("spark.ui.enabled", "false")'):
        assert setting in code, f"the local Spark example lacks {setting}"
    # SPARK_LOCAL_IP is read when the JVM starts: it comes before the session.
    assert code.index("SPARK_LOCAL_IP") < code.index("getOrCreate")


def test_local_spark_example_runs_on_loopback(monkeypatch):
    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    out = io.StringIO()
    scope = {}
    with contextlib.redirect_stdout(out):
        exec(compile(local_example(), str(README), "exec"), scope)
    spark = scope["spark"]
    try:
        # The count, then the betweenness of the vertices and of the edges
        # that the README shows under their print().
        shown = re.findall(r"^print\(pathctl\.spark\.\w*betweenness\(.*\n# (.*)$", local_example(), re.M)
        assert len(shown) == 2, shown
        assert out.getvalue().splitlines() == ["6", *shown]
        assert os.environ["SPARK_LOCAL_IP"] == "127.0.0.1"
        conf = spark.sparkContext.getConf()
        assert conf.get("spark.driver.host") == "127.0.0.1"
        assert conf.get("spark.driver.bindAddress") == "127.0.0.1"
        assert spark.sparkContext.uiWebUrl is None  # no UI started
    finally:
        spark.stop()

import json
import multiprocessing

from boolbench.llm.cache import CachedResponse, ResponseCache, cache_key

MESSAGES = [{"role": "user", "content": "Which river flows through Cairo?"}]
PARAMS = {"temperature": 0.7, "max_tokens": 64, "seed": 1}


def test_key_depends_on_model_messages_and_every_parameter():
    key = cache_key("m", MESSAGES, PARAMS)
    assert key == cache_key("m", [dict(MESSAGES[0])], dict(reversed(PARAMS.items())))
    assert (
        len(
            {
                key,
                cache_key("other", MESSAGES, PARAMS),
                cache_key("m", [{"role": "user", "content": "Which river?"}], PARAMS),
                cache_key("m", MESSAGES, {**PARAMS, "seed": 2}),
                cache_key("m", MESSAGES, {**PARAMS, "temperature": 0.0}),
                cache_key("m", MESSAGES, {**PARAMS, "max_tokens": 65}),
            }
        )
        == 6
    )


def test_put_get_roundtrip(tmp_path):
    cache = ResponseCache(tmp_path)
    key = cache_key("m", MESSAGES, PARAMS)
    assert cache.get(key) is None
    cache.put(key, {"messages": MESSAGES}, CachedResponse("The Nile", "stop", 12, 3))
    assert cache.get(key) == CachedResponse("The Nile", "stop", 12, 3)
    assert len(cache) == 1


def _writer(root: str, worker: int) -> None:
    cache = ResponseCache(root)
    for i in range(150):
        # Workers overlap on half of their keys, as concurrent jobs asking the same thing would.
        n = i if i % 2 else worker * 1000 + i
        key = cache_key("m", [{"role": "user", "content": f"q{n}"}], PARAMS)
        cache.put(key, {"n": n}, CachedResponse(f"answer {n}", "stop", n, 1))


def test_concurrent_writers_do_not_corrupt_it(tmp_path):
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path), w)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join()
        assert process.exitcode == 0
    files = list((tmp_path / "llm").rglob("*"))
    entries = [f for f in files if f.is_file()]
    assert all(f.suffix == ".json" for f in entries)  # no temporary files left behind
    assert len(entries) == 75 + 4 * 75  # shared odd keys once, each worker's even keys
    for entry in entries:
        data = json.loads(entry.read_text())
        assert data["response"]["content"] == f"answer {data['request']['n']}"

"""Searches that share no word with the code (Chinese over English code): what a `ready` repository answers.

Usage: python -m bench.nearest_by_meaning

None of these searches' words or names is any definition's, so the words find nothing; a `ready` repository then
answers with the definitions nearest by their vectors alone (`UnitVectors.nearest`), and says so. Before, it re-ranked
units the words had not found and answered as if they had. No gold: each search's first three are printed to be
judged by reading the repository. The repositories are bench.tests_asked's checkouts (its COMMITS, from /work/.mirror);
the vectors are made here by the service's dense model, as a ready repository's are.
"""

from __future__ import annotations

from bench.localize import WORK, checkout, workdir
from bench.localize_ctxsieve import CtxsieveLocalizer
from bench.tests_asked import COMMITS
from ctxsieve.ingest.coderank.query import read_code_query
from ctxsieve.ingest.coderank.ranker import meaning_units, nearest

SEARCHES = {
    "gin-gonic/gin": ["路由参数在哪里解析", "请求体大小限制在哪里设置", "查询参数的解析", "如何从崩溃中恢复",
                      "静态文件服务"],
    "google/gson": ["数字是如何解析的", "如何把对象序列化成字符串", "日期格式化", "嵌套深度限制"],
    "sinatra/sinatra": ["路由参数在哪里解析", "静态文件服务", "模板渲染", "会话的设置"],
    "expressjs/express": ["设置响应的缓存头", "解析请求的主机名", "发送文件下载", "路由参数的处理"],
}


def main() -> None:
    for repo, searches in SEARCHES.items():
        with workdir(repo, WORK / "tests_asked") as folder:
            checkout(folder, COMMITS[repo])
            localizer = CtxsieveLocalizer()
            localizer.sync(folder)
            units = meaning_units(localizer.memory.snapshot()[1])
            for query in searches:
                by_words = localizer.memory.search(read_code_query(query), 3)
                cosines = localizer.cosines(query)(units)
                assert cosines is not None
                print(f"{repo:18} {query}  words: {len(by_words)}  nearest: "
                      + ", ".join(f"{units[j].path}:{units[j].name}" for j in nearest(units, cosines, 3)), flush=True)


if __name__ == "__main__":
    main()

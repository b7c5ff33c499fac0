"""Write day74.nw copies whose student chunk holds the page's solution
(good) or one of the five wrong loops of issue 20: /tmp/day74.<name>.nw."""
import re
src = open("day74.nw").read()
stub = re.search(r"(<<exercise: your pipelined main loop>>=\n)(.*?)(\n@\n)",
                 src, re.S)
sol = re.search(r"<<exercise solution: the pipelined main loop>>=\n(.*?)\n@\n",
                src, re.S).group(1)
loop = re.search(r"<<the thread-scope main loop>>=\n(.*?)\n@\n",
                 src, re.S).group(1)
good = sol.replace("<<the thread-scope main loop>>", loop)
W, S = "    __pipeline_wait_prior(kStages - 2);\n", "    __syncthreads();\n"
F = "        fill(stage[next % kStages], next);\n"
variants = {
    "good": good,
    "wait-plus-one": good.replace("wait_prior(kStages - 2)",
                                  "wait_prior(kStages - 1)"),
    "no-barrier": good.replace(S, ""),
    "barrier-before-wait": good.replace(W + S, S + W),
    "refill-computed-stage": good.replace(
        F, "        fill(stage[k % kStages], next);\n"),
    "commit-only-when-fetched": good.replace(
        "        fill(stage[s], s);\n    __pipeline_commit();\n",
        "    {\n        fill(stage[s], s);\n        __pipeline_commit();\n"
        "    }\n").replace(
        F + "    __pipeline_commit();\n",
        "    {\n" + F + "        __pipeline_commit();\n    }\n"),
}
for name, body in variants.items():
    assert name == "good" or body != good, name
    open("/tmp/day74.%s.nw" % name, "w").write(
        src[:stub.start(2)] + body + src[stub.end(2):])
    print(name)

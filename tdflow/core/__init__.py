"""What every tdflow package stands on: the base error type and source positions
(:mod:`.errors`) and the on-disk cache policy (:mod:`.cache_dir`). It imports nothing else of
tdflow, so the front end, the dialect, the lowering and the runtime can all depend on it.
"""

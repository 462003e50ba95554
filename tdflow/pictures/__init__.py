"""Pictures of programs and op libraries: ``tdflow view`` (an HTML graph of a program),
``tdflow doc --html`` (a static reference site) and profiles in Chrome's Trace Event format.

They read the IR, the dialect and the plan; nothing below them imports them.
"""

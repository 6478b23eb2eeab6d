"""The 3-player solo-vs-Sun study (R7, R8): team and individual scoring, the edge at every rung, goals_333 and the fair handicap."""

/* quizgen's FSRS-6 scheduler: a port of Scheduler.review_card from the `fsrs` Python package (6.x)
 * with fuzzing off, so a learner's schedule in the browser is the one the reference would compute.
 * tests/test_fsrs_agreement.py replays random review sequences through both and compares them.
 *
 * A card is plain JSON: {state: 1 learning | 2 review | 3 relearning, step, stability, difficulty,
 * due, last_review} with times as epoch milliseconds (integers), so it can live in localStorage. */
(function (root) {
  "use strict";

  // fsrs.scheduler.DEFAULT_PARAMETERS (FSRS-6, 21 weights); the last one is the decay.
  var DEFAULT_PARAMETERS = [
    0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796,
    1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542
  ];
  var MINUTE = 60 * 1000;
  var DAY = 24 * 60 * MINUTE;
  var LEARNING = 1, REVIEW = 2, RELEARNING = 3;
  var AGAIN = 1, HARD = 2, GOOD = 3, EASY = 4;
  var STABILITY_MIN = 0.001, MIN_DIFFICULTY = 1.0, MAX_DIFFICULTY = 10.0;

  /* Python's round(): halves go to the even neighbour, where Math.round would go up. */
  function pyRound(x) {
    var f = Math.floor(x), rest = x - f;
    if (rest > 0.5) return f + 1;
    if (rest < 0.5) return f;
    return f % 2 === 0 ? f : f + 1;
  }

  // math.e ** x in Python is pow(e, x), which can differ from exp(x) in the last bit.
  function ePow(x) { return Math.pow(Math.E, x); }

  function Scheduler(options) {
    options = options || {};
    this.parameters = (options.parameters || DEFAULT_PARAMETERS).slice();
    this.desiredRetention = options.desiredRetention === undefined ? 0.9 : options.desiredRetention;
    this.learningSteps = (options.learningSteps || [1 * MINUTE, 10 * MINUTE]).slice();
    this.relearningSteps = (options.relearningSteps || [10 * MINUTE]).slice();
    this.maximumInterval = options.maximumInterval || 36500;
    this.decay = -this.parameters[20];
    this.factor = Math.pow(0.9, 1 / this.decay) - 1;
  }

  Scheduler.prototype.clampDifficulty = function (d) {
    return Math.min(Math.max(d, MIN_DIFFICULTY), MAX_DIFFICULTY);
  };

  Scheduler.prototype.clampStability = function (s) { return Math.max(s, STABILITY_MIN); };

  Scheduler.prototype.initialStability = function (rating) {
    return this.clampStability(this.parameters[rating - 1]);
  };

  Scheduler.prototype.initialDifficulty = function (rating, clamp) {
    var p = this.parameters;
    var d = p[4] - ePow(p[5] * (rating - 1)) + 1;
    return clamp ? this.clampDifficulty(d) : d;
  };

  /* Whole days until the next review (Python's banker's rounding), at least 1, at most the maximum. */
  Scheduler.prototype.nextInterval = function (stability) {
    var days = (stability / this.factor) * (Math.pow(this.desiredRetention, 1 / this.decay) - 1);
    return Math.min(Math.max(pyRound(days), 1), this.maximumInterval);
  };

  Scheduler.prototype.shortTermStability = function (stability, rating) {
    var p = this.parameters;
    var increase = ePow(p[17] * (rating - 3 + p[18])) * Math.pow(stability, -p[19]);
    if (rating !== AGAIN) increase = Math.max(increase, 1.0);
    return this.clampStability(stability * increase);
  };

  Scheduler.prototype.nextDifficulty = function (difficulty, rating) {
    var p = this.parameters;
    var easiest = this.initialDifficulty(EASY, false);
    var delta = -(p[6] * (rating - 3));
    var damped = difficulty + (10.0 - difficulty) * delta / 9.0;
    return this.clampDifficulty(p[7] * easiest + (1 - p[7]) * damped);
  };

  Scheduler.prototype.forgetStability = function (d, s, r) {
    var p = this.parameters;
    var longTerm = p[11] * Math.pow(d, -p[12]) * (Math.pow(s + 1, p[13]) - 1) * ePow((1 - r) * p[14]);
    var shortTerm = s / ePow(p[17] * p[18]);
    return Math.min(longTerm, shortTerm);
  };

  Scheduler.prototype.recallStability = function (d, s, r, rating) {
    var p = this.parameters;
    var hardPenalty = rating === HARD ? p[15] : 1;
    var easyBonus = rating === EASY ? p[16] : 1;
    return s * (1 + ePow(p[8]) * (11 - d) * Math.pow(s, -p[9]) * (ePow((1 - r) * p[10]) - 1) * hardPenalty * easyBonus);
  };

  Scheduler.prototype.nextStability = function (d, s, r, rating) {
    var next = rating === AGAIN ? this.forgetStability(d, s, r) : this.recallStability(d, s, r, rating);
    return this.clampStability(next);
  };

  /* Probability of recall at `now` (ms); whole elapsed days, as the reference counts them. */
  Scheduler.prototype.retrievability = function (card, now) {
    if (card.last_review == null || card.stability == null) return 0;
    var elapsed = Math.max(0, Math.floor((now - card.last_review) / DAY));
    return Math.pow(1 + this.factor * elapsed / card.stability, this.decay);
  };

  /* The memory update of one review: stability first (from the old difficulty), then difficulty. */
  Scheduler.prototype.updateMemory = function (card, rating, now, days) {
    if (card.stability == null || card.difficulty == null) {
      card.stability = this.initialStability(rating);
      card.difficulty = this.initialDifficulty(rating, true);
      return;
    }
    if (days !== null && days < 1) {
      card.stability = this.shortTermStability(card.stability, rating);
    } else {
      var r = this.retrievability(card, now);
      card.stability = this.nextStability(card.difficulty, card.stability, r, rating);
    }
    card.difficulty = this.nextDifficulty(card.difficulty, rating);
  };

  /* The interval (ms) of a (re)learning card, stepping through `steps`; may graduate it to review. */
  Scheduler.prototype.stepInterval = function (card, rating, steps) {
    var graduate = false, interval = 0;
    if (steps.length === 0 || (card.step >= steps.length && rating !== AGAIN)) {
      graduate = true;
    } else if (rating === AGAIN) {
      card.step = 0;
      interval = steps[0];
    } else if (rating === HARD) {
      if (card.step === 0 && steps.length === 1) interval = steps[0] * 1.5;
      else if (card.step === 0) interval = (steps[0] + steps[1]) / 2.0;
      else interval = steps[card.step];
    } else if (rating === GOOD && card.step + 1 < steps.length) {
      card.step += 1;
      interval = steps[card.step];
    } else {
      graduate = true;
    }
    if (!graduate) return interval;
    card.state = REVIEW;
    card.step = null;
    return this.nextInterval(card.stability) * DAY;
  };

  /* The card after a review with `rating` (1 Again .. 4 Easy) at `now` (ms); the input is not changed. */
  Scheduler.prototype.review = function (card, rating, now) {
    if (!(rating >= AGAIN && rating <= EASY)) throw new Error("unknown rating: " + rating);
    var c = copy(card);
    var days = c.last_review == null ? null : Math.floor((now - c.last_review) / DAY);
    var interval;
    if (c.state === LEARNING || c.state === RELEARNING) {
      if (c.state === RELEARNING && (c.stability == null || c.difficulty == null)) {
        throw new Error("a relearning card has a stability and a difficulty");
      }
      this.updateMemory(c, rating, now, days);
      interval = this.stepInterval(c, rating, c.state === LEARNING ? this.learningSteps : this.relearningSteps);
    } else if (c.state === REVIEW) {
      this.updateMemory(c, rating, now, days);
      if (rating !== AGAIN) {
        interval = this.nextInterval(c.stability) * DAY;
      } else if (this.relearningSteps.length === 0) {
        interval = this.nextInterval(c.stability) * DAY;
      } else {
        c.state = RELEARNING;
        c.step = 0;
        interval = this.relearningSteps[0];
      }
    } else {
      throw new Error("unknown card state: " + c.state);
    }
    c.due = now + interval;
    c.last_review = now;
    return c;
  };

  /* What each rating would do to `card` now: [{rating, card}] for Again..Easy. */
  Scheduler.prototype.preview = function (card, now) {
    var out = [];
    for (var rating = AGAIN; rating <= EASY; rating++) out.push({ rating: rating, card: this.review(card, rating, now) });
    return out;
  };

  function copy(card) {
    return {
      state: card.state, step: card.step, stability: card.stability, difficulty: card.difficulty,
      due: card.due, last_review: card.last_review
    };
  }

  /* A card never reviewed: learning, first step, due now. */
  function newCard(now) {
    return { state: LEARNING, step: 0, stability: null, difficulty: null, due: now, last_review: null };
  }

  var api = {
    Scheduler: Scheduler, newCard: newCard, pyRound: pyRound, DEFAULT_PARAMETERS: DEFAULT_PARAMETERS,
    MINUTE: MINUTE, DAY: DAY, LEARNING: LEARNING, REVIEW: REVIEW, RELEARNING: RELEARNING,
    AGAIN: AGAIN, HARD: HARD, GOOD: GOOD, EASY: EASY
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenFSRS = api;
})(typeof window !== "undefined" ? window : this);

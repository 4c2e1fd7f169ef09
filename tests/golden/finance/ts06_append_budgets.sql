-- ledgerflow 0.1.0: project ts06_append_budgets (id 0b000000-0000-4000-8000-000000000006, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_gl <- dataset gl (period, latest active version)
--   ds_budgets <- dataset budgets (period, latest active version)

-- lf_stage_1: operations input, 1; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_gl`
  WHERE
    (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
), `op_001_source` AS (
  SELECT
    `budget_id`,
    `line_number`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount`,
    `budget_type`,
    `_period`,
    `_row_id`
  FROM `ds_budgets`
  WHERE
    NOT `_deleted`
    AND (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
), `op_001_aggregated` AS (
  SELECT
    `account_code`,
    `cost_center_code`,
    `currency`,
    SUM(`amount`) AS `amount_local`
  FROM `op_001_source`
  GROUP BY
    `account_code`,
    `cost_center_code`,
    `currency`
), `op_001_append` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    `_lf_origin`,
    `_lf_deleted_by`
  FROM `input`
  UNION ALL
  SELECT
    CAST(NULL AS STRING) AS `journal_id`,
    CAST(NULL AS INT) AS `line_number`,
    CAST(NULL AS DATE) AS `posting_date`,
    CAST(`account_code` AS STRING) AS `account_code`,
    CAST(`cost_center_code` AS STRING) AS `cost_center_code`,
    CAST(`currency` AS STRING) AS `currency`,
    CAST(`amount_local` AS DECIMAL(18, 2)) AS `amount_local`,
    CAST(NULL AS DECIMAL(18, 2)) AS `amount_reporting`,
    CAST(NULL AS STRING) AS `description`,
    CAST(NULL AS STRING) AS `source_system`,
    CONCAT(
      SUBSTRING(
        TRANSLATE(LPAD(HEX(UNIX_MILLIS(:run_started_at)), 12, '0'), 'ABCDEF', 'abcdef'),
        1,
        8
      ),
      '-',
      SUBSTRING(
        TRANSLATE(LPAD(HEX(UNIX_MILLIS(:run_started_at)), 12, '0'), 'ABCDEF', 'abcdef'),
        9,
        4
      ),
      '-7',
      SUBSTRING(
        SHA2(
          TO_JSON(
            STRUCT(1 AS k0, `account_code` AS k1, `cost_center_code` AS k2, `currency` AS k3)
          ),
          256
        ),
        1,
        3
      ),
      '-8',
      SUBSTRING(
        SHA2(
          TO_JSON(
            STRUCT(1 AS k0, `account_code` AS k1, `cost_center_code` AS k2, `currency` AS k3)
          ),
          256
        ),
        4,
        3
      ),
      '-',
      SUBSTRING(
        SHA2(
          TO_JSON(
            STRUCT(1 AS k0, `account_code` AS k1, `cost_center_code` AS k2, `currency` AS k3)
          ),
          256
        ),
        7,
        12
      )
    ) AS `_row_id`,
    FALSE AS `_deleted`,
    :run_started_at AS `_updated_at`,
    :period_identifier AS `_period`,
    '' AS `_labels`,
    '0a000000-0000-4000-8000-000000000005' AS `_source_dataset`,
    1 AS `_operation_seq`,
    1 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `op_001_aggregated`
)
SELECT
  *
FROM `op_001_append`;

-- output_002: operation 2 'Write actuals and budgets' writes table ts06_with_budgets
SELECT
  `journal_id`,
  `line_number`,
  `posting_date`,
  `account_code`,
  `cost_center_code`,
  `currency`,
  `amount_local`,
  `amount_reporting`,
  `description`,
  `source_system`,
  `_row_id`,
  `_deleted`,
  `_updated_at`,
  `_period`,
  `_labels`,
  `_source_dataset`,
  `_operation_seq`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

-- Checks (evaluated by the run on the rows it stages, before the commit point; `input` is the
-- rows after the period filter, input_live those of them not deleted (what a reconcile from the input
-- to an output that leaves deleted rows out counts), output_NNN the rows output NNN writes):

-- check budgets_accounted_for: reconcile input -> output 2, explained by 1, tolerance 0.00; on violation: fail
SELECT
  COUNT(*) AS `count`,
  SUM(`amount_local`) AS `SUM(amount_local)`
FROM `input_live`;
SELECT
  COUNT(*) AS `count`,
  SUM(`amount_local`) AS `SUM(amount_local)`
FROM `output_002`;

